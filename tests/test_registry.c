/*
 * The plugin registry: keys and defaults, direct creators, plugin libraries
 * (good, broken, refusing, from the future, clashing), independent
 * registries side by side, library identity, error messages, and allocation
 * failure at every step.
 */
#include <elf.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "registry/registry.h"
#include "testutil.h"

#define LIB(name) PRT_TESTLIB_DIR "/" name ".so"
#define FOO_A LIB("testlib_foo_a")
#define FOO_B LIB("testlib_foo_b")

/* ---- creators added directly -------------------------------------------- */

static prt_status direct_create(const prt_plugin_creator *self, const char *layer_name,
                                const prt_field_collection *fields, int32_t phase,
                                prt_plugin **out)
{
    return PRT_ERR_UNSUPPORTED;
}

static const prt_field_schema gamma_fields[] = {
    {"axis", PRT_FIELD_INT32, 1, "the axis"},
    {"pads", PRT_FIELD_INT64, -1, NULL},
};

/* ::Gamma@1, the default namespace and version. */
static const prt_plugin_creator gamma_creator = {sizeof(prt_plugin_creator),
                                                 PRT_PLUGIN_ABI_VERSION,
                                                 "Gamma",
                                                 "1",
                                                 "",
                                                 2,
                                                 gamma_fields,
                                                 direct_create,
                                                 NULL};
/* test::Gamma@2: same name, other namespace and version. */
static const prt_plugin_creator gamma2_creator = {sizeof(prt_plugin_creator),
                                                  PRT_PLUGIN_ABI_VERSION,
                                                  "Gamma",
                                                  "2",
                                                  "test",
                                                  0,
                                                  NULL,
                                                  direct_create,
                                                  NULL};
/* test::Foo@1 directly, to clash with the Foo libraries. */
static const prt_plugin_creator foo_direct = {sizeof(prt_plugin_creator),
                                              PRT_PLUGIN_ABI_VERSION,
                                              "Foo",
                                              "1",
                                              "test",
                                              0,
                                              NULL,
                                              direct_create,
                                              NULL};

/* 1 if the registry's list of libraries contains `sub`. */
static int libraries_mention(const prt_registry *reg, const char *sub)
{
    char buf[1024];
    registry_describe_libraries(reg, buf, sizeof buf);
    return strstr(buf, sub) != NULL;
}

static void test_direct(void)
{
    prt_registry *reg = NULL;
    const prt_plugin_creator *c = NULL;
    uint64_t hash = 123;

    CHECK_OK(prt_registry_create(&reg));
    if (!reg)
        return;
    CHECK(prt_registry_creator_count(reg) == 0);
    CHECK(prt_registry_get_creator(reg, 0) == NULL);

    CHECK_OK(prt_registry_add_creator(reg, &gamma_creator));
    CHECK_OK(prt_registry_add_creator(reg, &gamma2_creator));
    CHECK(prt_registry_creator_count(reg) == 2);
    CHECK(prt_registry_get_creator(reg, 0) == &gamma_creator);
    CHECK(prt_registry_get_creator(reg, 1) == &gamma2_creator);
    CHECK(prt_registry_get_creator(reg, 2) == NULL);
    CHECK(prt_registry_get_creator(reg, -1) == NULL);

    /* NULL namespace means "", NULL version means "1". */
    CHECK_OK(prt_registry_find_creator(reg, NULL, "Gamma", NULL, &c));
    CHECK(c == &gamma_creator);
    c = NULL;
    CHECK_OK(prt_registry_find_creator(reg, "", "Gamma", "1", &c));
    CHECK(c == &gamma_creator);
    CHECK_OK(prt_registry_find_creator(reg, "test", "Gamma", "2", &c));
    CHECK(c == &gamma2_creator);

    /* Missing keys name the key, near misses and the (absent) libraries;
     * *out is untouched. */
    c = &foo_direct;
    CHECK_ERR(prt_registry_find_creator(reg, "test", "Gamma", NULL, &c),
              PRT_ERR_NOT_FOUND, "test::Gamma@1");
    CHECK(c == &foo_direct);
    CHECK(strstr(prt_last_error(), "::Gamma@1") != NULL);
    CHECK(strstr(prt_last_error(), "test::Gamma@2") != NULL);
    CHECK(strstr(prt_last_error(), "no plugin libraries loaded") != NULL);
    CHECK_ERR(prt_registry_find_creator(reg, NULL, "Nope", "3", &c), PRT_ERR_NOT_FOUND,
              "::Nope@3");
    CHECK(strstr(prt_last_error(), "did you mean") == NULL);
    /* A spelling a letter or a case off names the nearest key. */
    CHECK_ERR(prt_registry_find_creator(reg, "", "gama", "1", &c), PRT_ERR_NOT_FOUND,
              "did you mean ::Gamma@1");

    /* Duplicates. */
    CHECK_ERR(prt_registry_add_creator(reg, &gamma_creator), PRT_ERR_ALREADY_EXISTS,
              "::Gamma@1");
    CHECK(strstr(prt_last_error(), "added directly") != NULL);
    CHECK(prt_registry_creator_count(reg) == 2);

    /* Direct creators have no library. */
    CHECK(prt_registry_get_creator_library(reg, &gamma_creator, &hash) == NULL);
    CHECK(hash == 0);
    CHECK(prt_registry_get_creator_library(reg, &foo_direct, NULL) == NULL);

    /* Remove, with the same defaults, keeping the others' order. */
    CHECK_ERR(prt_registry_remove_creator(reg, "", "Gamma", "7"), PRT_ERR_NOT_FOUND,
              "::Gamma@7");
    CHECK_OK(prt_registry_add_creator(reg, &foo_direct));
    CHECK_OK(prt_registry_remove_creator(reg, NULL, "Gamma", NULL));
    CHECK(prt_registry_creator_count(reg) == 2);
    CHECK(prt_registry_get_creator(reg, 0) == &gamma2_creator);
    CHECK(prt_registry_get_creator(reg, 1) == &foo_direct);
    CHECK_ERR(prt_registry_find_creator(reg, NULL, "Gamma", NULL, &c), PRT_ERR_NOT_FOUND,
              "::Gamma@1");
    CHECK_ERR(prt_registry_remove_creator(reg, NULL, "Gamma", NULL), PRT_ERR_NOT_FOUND,
              "::Gamma@1");
    /* Removed, it can come back. */
    CHECK_OK(prt_registry_add_creator(reg, &gamma_creator));
    CHECK(prt_registry_get_creator(reg, 2) == &gamma_creator);

    /* Bad arguments are errors, not crashes. */
    CHECK_ERR(prt_registry_add_creator(reg, NULL), PRT_ERR_INVALID_ARGUMENT, NULL);
    CHECK_ERR(prt_registry_add_creator(NULL, &gamma_creator), PRT_ERR_INVALID_ARGUMENT,
              NULL);
    CHECK_ERR(prt_registry_find_creator(reg, NULL, NULL, NULL, &c),
              PRT_ERR_INVALID_ARGUMENT, NULL);
    CHECK_ERR(prt_registry_find_creator(reg, NULL, "Gamma", NULL, NULL),
              PRT_ERR_INVALID_ARGUMENT, NULL);
    CHECK_ERR(prt_registry_find_creator(NULL, NULL, "Gamma", NULL, &c),
              PRT_ERR_INVALID_ARGUMENT, NULL);
    CHECK_ERR(prt_registry_remove_creator(reg, NULL, NULL, NULL),
              PRT_ERR_INVALID_ARGUMENT, NULL);
    CHECK_ERR(prt_registry_load_library(reg, NULL), PRT_ERR_INVALID_ARGUMENT, NULL);
    CHECK_ERR(prt_registry_load_library(reg, ""), PRT_ERR_INVALID_ARGUMENT, NULL);
    CHECK_ERR(prt_registry_unload_library(reg, NULL), PRT_ERR_INVALID_ARGUMENT, NULL);
    CHECK_ERR(prt_registry_create(NULL), PRT_ERR_INVALID_ARGUMENT, NULL);
    CHECK(prt_registry_creator_count(NULL) == 0);
    CHECK(prt_registry_get_creator(NULL, 0) == NULL);
    CHECK(prt_registry_get_creator_library(NULL, &gamma_creator, &hash) == NULL);

    prt_registry_destroy(reg);
    prt_registry_destroy(NULL);
}

/* Creators that break a rule are refused, naming them. */
static void test_bad_creators(void)
{
    prt_registry *reg = NULL;
    prt_plugin_creator c;
    prt_field_schema bad_field = {"w", 42, 1, NULL};
    prt_field_schema bad_len = {"w", PRT_FIELD_INT32, -2, NULL};
    prt_field_schema no_name = {NULL, PRT_FIELD_INT32, 1, NULL};

    CHECK_OK(prt_registry_create(&reg));
    if (!reg)
        return;

    c = gamma_creator;
    c.abi_version = PRT_PLUGIN_ABI_VERSION + 1;
    CHECK_ERR(prt_registry_add_creator(reg, &c), PRT_ERR_VERSION,
              "::Gamma@1 speaks ABI 2, this plugrt speaks 1");

    c = gamma_creator;
    c.abi_version = 0;
    CHECK_ERR(prt_registry_add_creator(reg, &c), PRT_ERR_INVALID_ARGUMENT, "::Gamma@1");

    c = gamma_creator;
    c.struct_size = (uint32_t)offsetof(prt_plugin_creator, create);
    CHECK_ERR(prt_registry_add_creator(reg, &c), PRT_ERR_INVALID_ARGUMENT,
              "::Gamma@1 has struct_size");

    c = gamma_creator;
    c.struct_size = 8;
    CHECK_ERR(prt_registry_add_creator(reg, &c), PRT_ERR_INVALID_ARGUMENT,
              "struct_size 8");

    c = gamma_creator;
    c.create = NULL;
    CHECK_ERR(prt_registry_add_creator(reg, &c), PRT_ERR_INVALID_ARGUMENT,
              "::Gamma@1 has no create function");

    c = gamma_creator;
    c.name = NULL;
    CHECK_ERR(prt_registry_add_creator(reg, &c), PRT_ERR_INVALID_ARGUMENT,
              "must not be NULL");
    c = gamma_creator;
    c.version = NULL;
    CHECK_ERR(prt_registry_add_creator(reg, &c), PRT_ERR_INVALID_ARGUMENT,
              "must not be NULL");
    c = gamma_creator;
    c.plugin_namespace = NULL;
    CHECK_ERR(prt_registry_add_creator(reg, &c), PRT_ERR_INVALID_ARGUMENT,
              "must not be NULL");
    c = gamma_creator;
    c.name = "";
    CHECK_ERR(prt_registry_add_creator(reg, &c), PRT_ERR_INVALID_ARGUMENT,
              "must not be empty");

    c = gamma_creator;
    c.fields = NULL;
    CHECK_ERR(prt_registry_add_creator(reg, &c), PRT_ERR_INVALID_ARGUMENT,
              "schema array is NULL");
    c = gamma_creator;
    c.nb_fields = -1;
    CHECK_ERR(prt_registry_add_creator(reg, &c), PRT_ERR_INVALID_ARGUMENT, "negative");
    c = gamma_creator;
    c.nb_fields = 1;
    c.fields = &bad_field;
    CHECK_ERR(prt_registry_add_creator(reg, &c), PRT_ERR_INVALID_ARGUMENT,
              "unknown type 42");
    c.fields = &bad_len;
    CHECK_ERR(prt_registry_add_creator(reg, &c), PRT_ERR_INVALID_ARGUMENT, "length -2");
    c.fields = &no_name;
    CHECK_ERR(prt_registry_add_creator(reg, &c), PRT_ERR_INVALID_ARGUMENT, "NULL name");

    CHECK(prt_registry_creator_count(reg) == 0);
    prt_registry_destroy(reg);
}

/* ---- libraries ----------------------------------------------------------- */

/* The one creator of a Foo library: "a" or "b" by its user data, and its
 * schema agrees. */
static const char *foo_flavour(const prt_plugin_creator *c)
{
    const char *u = c ? (const char *)c->user : NULL;
    if (!u || c->nb_fields != 1)
        return "?";
    if (strcmp(u, "a") == 0 && strcmp(c->fields[0].name, "alpha") == 0)
        return "a";
    if (strcmp(u, "b") == 0 && strcmp(c->fields[0].name, "beta") == 0)
        return "b";
    return "?";
}

static void test_load_unload(void)
{
    prt_registry *reg = NULL;
    const prt_plugin_creator *c = NULL;
    const char *path;
    uint64_t hash = 0;
    prt_plugin *plugin = NULL;
    prt_field_collection none = {0, NULL};

    CHECK_OK(prt_registry_create(&reg));
    if (!reg)
        return;
    CHECK_OK(prt_registry_add_creator(reg, &gamma_creator));
    CHECK_OK(prt_registry_load_library(reg, FOO_A));
    CHECK(prt_registry_creator_count(reg) == 2);
    CHECK_OK(prt_registry_find_creator(reg, "test", "Foo", NULL, &c));
    CHECK(strcmp(foo_flavour(c), "a") == 0);
    CHECK(prt_registry_get_creator(reg, 1) == c);

    /* The creator works, and its errors arrive through the host services. */
    if (c)
        CHECK_ERR(c->create(c, "foo", &none, PRT_PHASE_BUILD, &plugin),
                  PRT_ERR_UNSUPPORTED, "only exists to be found");
    CHECK(plugin == NULL);

    /* Identity: the path as given and the hash of the file's bytes. */
    path = prt_registry_get_creator_library(reg, c, &hash);
    CHECK(path && strcmp(path, FOO_A) == 0);
    CHECK(hash != 0);
    {
        FILE *f = fopen(FOO_A, "rb");
        uint64_t want = BASE_FNV_SEED;
        unsigned char buf[4096];
        size_t n;
        CHECK(f != NULL);
        while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
            want = base_fnv1a64(buf, n, want);
        if (f)
            fclose(f);
        CHECK(hash == want);
    }

    /* "Not found" lists what is loaded. */
    CHECK_ERR(prt_registry_find_creator(reg, "test", "Bar", "1", &c), PRT_ERR_NOT_FOUND,
              "test::Bar@1");
    CHECK(strstr(prt_last_error(), "plugin libraries loaded: " FOO_A) != NULL);

    /* Clashes with what a library provides name that library. */
    CHECK_ERR(prt_registry_add_creator(reg, &foo_direct), PRT_ERR_ALREADY_EXISTS,
              "test::Foo@1");
    CHECK(strstr(prt_last_error(), FOO_A) != NULL);

    /* The same library again: by the same path, and by another spelling. */
    CHECK_ERR(prt_registry_load_library(reg, FOO_A), PRT_ERR_ALREADY_EXISTS, FOO_A);
    CHECK_ERR(prt_registry_load_library(reg, PRT_TESTLIB_DIR "/./testlib_foo_a.so"),
              PRT_ERR_ALREADY_EXISTS, "already loaded into this registry as");
    CHECK(prt_registry_creator_count(reg) == 2);

    /* A library whose key is taken adds nothing and stays unloaded. */
    CHECK_ERR(prt_registry_load_library(reg, FOO_B), PRT_ERR_ALREADY_EXISTS,
              "test::Foo@1");
    CHECK(strstr(prt_last_error(), FOO_B) != NULL);
    CHECK(strstr(prt_last_error(), FOO_A) != NULL);
    CHECK(prt_registry_creator_count(reg) == 2);
    CHECK(!libraries_mention(reg, "testlib_foo_b"));
    CHECK_ERR(prt_registry_unload_library(reg, FOO_B), PRT_ERR_NOT_FOUND, FOO_B);

    /* Unload removes its creators, keeps the others. */
    CHECK_OK(prt_registry_unload_library(reg, FOO_A));
    CHECK(prt_registry_creator_count(reg) == 1);
    CHECK(prt_registry_get_creator(reg, 0) == &gamma_creator);
    CHECK_ERR(prt_registry_find_creator(reg, "test", "Foo", NULL, &c), PRT_ERR_NOT_FOUND,
              "no plugin libraries loaded");
    CHECK_ERR(prt_registry_unload_library(reg, FOO_A), PRT_ERR_NOT_FOUND,
              "not loaded into this registry");

    /* Now B loads, and a direct Foo clashes with it. */
    CHECK_OK(prt_registry_load_library(reg, FOO_B));
    CHECK_OK(prt_registry_find_creator(reg, "test", "Foo", "1", &c));
    CHECK(strcmp(foo_flavour(c), "b") == 0);
    CHECK_ERR(prt_registry_load_library(reg, FOO_A), PRT_ERR_ALREADY_EXISTS,
              "testlib_foo_b.so");

    /* A direct creator with a library's key blocks that library. */
    CHECK_OK(prt_registry_unload_library(reg, FOO_B));
    CHECK_OK(prt_registry_add_creator(reg, &foo_direct));
    CHECK_ERR(prt_registry_load_library(reg, FOO_A), PRT_ERR_ALREADY_EXISTS,
              "added directly");
    CHECK(prt_registry_creator_count(reg) == 2);

    /* Destroy unloads what is still loaded (ASan sees any leak). */
    CHECK_OK(prt_registry_remove_creator(reg, "test", "Foo", "1"));
    CHECK_OK(prt_registry_load_library(reg, FOO_A));
    CHECK_OK(prt_registry_load_library(reg, LIB("testlib_malformed")));
    CHECK(libraries_mention(reg, FOO_A ", " PRT_TESTLIB_DIR "/testlib_malformed.so"));
    prt_registry_destroy(reg);
}

/* Two registries each hold their own test::Foo@1. */
static void test_side_by_side(void)
{
    prt_registry *ra = NULL, *rb = NULL;
    const prt_plugin_creator *ca = NULL, *cb = NULL;
    uint64_t ha = 0, hb = 0;
    const char *pa, *pb;

    CHECK_OK(prt_registry_create(&ra));
    CHECK_OK(prt_registry_create(&rb));
    if (!ra || !rb) {
        prt_registry_destroy(ra);
        prt_registry_destroy(rb);
        return;
    }
    CHECK_OK(prt_registry_load_library(ra, FOO_A));
    CHECK_OK(prt_registry_load_library(rb, FOO_B));
    CHECK_OK(prt_registry_find_creator(ra, "test", "Foo", "1", &ca));
    CHECK_OK(prt_registry_find_creator(rb, "test", "Foo", "1", &cb));
    CHECK(strcmp(foo_flavour(ca), "a") == 0);
    CHECK(strcmp(foo_flavour(cb), "b") == 0);
    CHECK(ca != cb);
    pa = prt_registry_get_creator_library(ra, ca, &ha);
    pb = prt_registry_get_creator_library(rb, cb, &hb);
    CHECK(pa && strcmp(pa, FOO_A) == 0);
    CHECK(pb && strcmp(pb, FOO_B) == 0);
    CHECK(ha != 0 && hb != 0 && ha != hb);
    /* A creator of another registry is not this one's. */
    CHECK(prt_registry_get_creator_library(ra, cb, &hb) == NULL);
    CHECK(hb == 0);

    /* The same library in both: each registry holds it on its own. */
    CHECK_OK(prt_registry_load_library(rb, LIB("testlib_malformed")));
    CHECK_OK(prt_registry_load_library(ra, LIB("testlib_malformed")));
    CHECK_OK(prt_registry_unload_library(ra, LIB("testlib_malformed")));
    CHECK_OK(prt_registry_find_creator(rb, "test", "Malformed", "1", &cb));
    CHECK(cb && cb->create != NULL);

    prt_registry_destroy(ra);
    /* rb's creator still lives after ra is gone. */
    CHECK_OK(prt_registry_find_creator(rb, "test", "Foo", "1", &cb));
    CHECK(strcmp(foo_flavour(cb), "b") == 0);
    prt_registry_destroy(rb);
}

/* 1 if the last error begins "cannot load plugin library PATH: " and names
 * PATH nowhere else: the loader's "PATH: reason" and a caller's prefix used
 * to say it two or three times. */
static int named_once(const char *path)
{
    const char *msg = prt_last_error();
    char head[512];
    snprintf(head, sizeof head, "cannot load plugin library %s: ", path);
    if (strncmp(msg, head, strlen(head)) == 0 && !strstr(msg + strlen(head), path) &&
        !strstr(msg + strlen(head), "cannot load plugin library"))
        return 1;
    fprintf(stderr, "message does not name %s once, first: %s\n", path, msg);
    return 0;
}

static void test_bad_libraries(void)
{
    prt_registry *reg = NULL;
    static const struct {
        const char *flaw;
        prt_status status;
        const char *message;
    } flaws[] = {
        {"small_struct", PRT_ERR_MALFORMED, "struct_size 8"},
        {"null_creators", PRT_ERR_MALFORMED, "creators array is NULL"},
        {"negative_count", PRT_ERR_MALFORMED, "lists -1 creators"},
        {"null_creator", PRT_ERR_MALFORMED, "creator 0 of 1 is NULL"},
        {"no_create", PRT_ERR_MALFORMED, "test::Malformed@1 has no create"},
        {"null_name", PRT_ERR_MALFORMED, "must not be NULL"},
        {"bad_field", PRT_ERR_MALFORMED, "unknown type 99"},
        {"zero_abi", PRT_ERR_MALFORMED, "abi_version 0"},
    };

    CHECK_OK(prt_registry_create(&reg));
    if (!reg)
        return;
    CHECK_OK(prt_registry_add_creator(reg, &gamma_creator));

    CHECK_ERR(prt_registry_load_library(reg, LIB("testlib_does_not_exist")), PRT_ERR_IO,
              "No such file or directory");
    CHECK(named_once(LIB("testlib_does_not_exist")));
    /* dlopen's search: the loader's message begins with the name too. */
    CHECK_ERR(prt_registry_load_library(reg, "no_such_plugin_library.so"), PRT_ERR_IO,
              "cannot open shared object file");
    CHECK(named_once("no_such_plugin_library.so"));
    /* Not a shared library at all. */
    CHECK_ERR(prt_registry_load_library(reg, PRT_TESTLIB_DIR), PRT_ERR_IO,
              "it is a directory, not a regular file");
    CHECK(named_once(PRT_TESTLIB_DIR));
    /* A symbol nothing defines: the loader refuses it. */
    CHECK_ERR(prt_registry_load_library(reg, LIB("testlib_unresolved")), PRT_ERR_IO,
              "undefined symbol: testlib_unresolved_missing");
    CHECK(named_once(LIB("testlib_unresolved")));

    CHECK_ERR(prt_registry_load_library(reg, LIB("testlib_noentry")), PRT_ERR_NOT_FOUND,
              PRT_PLUGIN_ENTRY_SYMBOL);
    CHECK(named_once(LIB("testlib_noentry")));

    CHECK_ERR(prt_registry_load_library(reg, LIB("testlib_refuse")), PRT_ERR_VERSION,
              "cannot serve plugin ABI 1");
    CHECK(named_once(LIB("testlib_refuse")));
    /* The library's own explanation is kept. */
    CHECK(strstr(prt_last_error(), "serves no ABI at all") != NULL);

    CHECK_ERR(prt_registry_load_library(reg, LIB("testlib_future")), PRT_ERR_VERSION,
              "speaks ABI 2, this plugrt speaks 1");
    CHECK(named_once(LIB("testlib_future")));

    CHECK_ERR(prt_registry_load_library(reg, LIB("testlib_dup")), PRT_ERR_ALREADY_EXISTS,
              "test::Dup@1");
    CHECK(strstr(prt_last_error(), "twice") != NULL && named_once(LIB("testlib_dup")));
    /* Not even its unique creator was added. */
    CHECK(prt_registry_creator_count(reg) == 1);

    for (size_t i = 0; i < sizeof flaws / sizeof flaws[0]; i++) {
        setenv("PRT_TESTLIB_FLAW", flaws[i].flaw, 1);
        CHECK_ERR(prt_registry_load_library(reg, LIB("testlib_malformed")),
                  flaws[i].status, flaws[i].message);
        if (!named_once(LIB("testlib_malformed"))) {
            fprintf(stderr, "flaw %s: the message does not name the library once\n",
                    flaws[i].flaw);
            CHECK(0);
        }
    }
    unsetenv("PRT_TESTLIB_FLAW");

    /* Nothing of any of them stuck. */
    CHECK(prt_registry_creator_count(reg) == 1);
    CHECK(libraries_mention(reg, "no plugin libraries loaded"));
    CHECK_OK(prt_registry_load_library(reg, LIB("testlib_malformed")));
    CHECK(prt_registry_creator_count(reg) == 2);
    prt_registry_destroy(reg);
}

static void test_describe(void)
{
    prt_registry *reg = NULL;
    char buf[64];
    char key[16];

    registry_describe_libraries(NULL, buf, sizeof buf);
    CHECK(strcmp(buf, "no registry") == 0);
    CHECK_OK(prt_registry_create(&reg));
    if (!reg)
        return;
    registry_describe_libraries(reg, buf, sizeof buf);
    CHECK(strcmp(buf, "no plugin libraries loaded") == 0);
    CHECK_OK(prt_registry_load_library(reg, FOO_A));
    CHECK_OK(prt_registry_load_library(reg, LIB("testlib_malformed")));
    /* Too long for the buffer: truncated, terminated, marked. */
    registry_describe_libraries(reg, buf, sizeof buf);
    CHECK(strlen(buf) == sizeof buf - 1);
    CHECK(strcmp(buf + sizeof buf - 4, "...") == 0);
    registry_describe_libraries(reg, buf, 1);
    CHECK(buf[0] == '\0');
    registry_describe_libraries(reg, buf, 0);

    registry_format_key(NULL, "N", NULL, key, sizeof key);
    CHECK(strcmp(key, "::N@1") == 0);
    registry_format_key("ns", "Name", "2", key, sizeof key);
    CHECK(strcmp(key, "ns::Name@2") == 0);
    registry_format_key("a-long-namespace", "Name", "2", key, sizeof key);
    CHECK(strlen(key) == sizeof key - 1);
    prt_registry_destroy(reg);
}

/* ---- damaged library files ---------------------------------------------- */

/* A scratch directory for altered copies of the test libraries. */
static char scratch[256];

static int make_scratch(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/prt_test_registry_XXXXXX",
             tmp && tmp[0] ? tmp : "/tmp");
    return mkdtemp(scratch) != NULL;
}

/* scratch/name, in a static buffer of its own per slot. */
static const char *scratch_path(const char *name)
{
    static char bufs[4][320];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, sizeof bufs[0], "%s/%s", scratch, name);
    return b;
}

static int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, n, f) == n;
    if (f && fclose(f) != 0)
        ok = 0;
    return ok;
}

/* The whole file, malloc'd; NULL on failure. */
static uint8_t *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    uint8_t *p = NULL;
    long len;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (p = malloc((size_t)len)) &&
        fread(p, 1, (size_t)len, f) != (size_t)len) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *n = p ? (size_t)len : 0;
    return p;
}

/* Loading `path` fails with `status`, a message naming the path and
 * containing `sub`, and leaves the registry as it was. */
static void expect_load_error(prt_registry *reg, const char *path, prt_status status,
                              const char *sub, int line)
{
    int32_t before = prt_registry_creator_count(reg);
    prt_status st = prt_registry_load_library(reg, path);
    tu_checks++;
    if (st != status || !strstr(prt_last_error(), sub) ||
        !strstr(prt_last_error(), path)) {
        tu_failures++;
        fprintf(stderr,
                "%s:%d: loading %s gave %s, wanted %s naming the path "
                "and \"%s\"\n    message: %s\n",
                __FILE__, line, path, prt_status_name(st), prt_status_name(status), sub,
                prt_last_error());
    }
    CHECK(prt_registry_creator_count(reg) == before);
    CHECK(!libraries_mention(reg, path));
}
#define EXPECT_LOAD_ERROR(reg, path, status, sub)                                        \
    expect_load_error((reg), (path), (status), (sub), __LINE__)

/* FOO_A's bytes with `n` bytes at `at` replaced by `v`, written to
 * scratch/name; the path. */
static const char *altered_copy(const uint8_t *lib, size_t size, const char *name,
                                size_t at, const void *v, size_t n)
{
    const char *path = scratch_path(name);
    uint8_t *c = malloc(size);
    int ok = c != NULL;
    if (ok) {
        memcpy(c, lib, size);
        memcpy(c + at, v, n);
        ok = write_file(path, c, size);
    }
    free(c);
    CHECK(ok);
    return path;
}

static void test_damaged_files(void)
{
    prt_registry *reg = NULL;
    uint8_t *lib;
    size_t size = 0;
    char want[128];
    const char *path;
    Elf64_Ehdr eh;
    Elf64_Phdr ph[32];
    int nb_ph;
    size_t last_end = 0;

    lib = read_file(FOO_A, &size);
    CHECK(lib && size > sizeof eh);
    if (!lib || size <= sizeof eh || !make_scratch()) {
        free(lib);
        CHECK(0);
        return;
    }
    /* The layout of the intact library, to cut it at chosen places. */
    memcpy(&eh, lib, sizeof eh);
    nb_ph = eh.e_phnum;
    CHECK(eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof ph[0]);
    CHECK(nb_ph > 1 && nb_ph <= 32 && eh.e_phoff + (size_t)nb_ph * sizeof ph[0] <= size);
    if (nb_ph > 32)
        nb_ph = 32;
    memcpy(ph, lib + eh.e_phoff, (size_t)nb_ph * sizeof ph[0]);
    CHECK_OK(prt_registry_create(&reg));
    if (!reg)
        goto done;

    /* Cut inside the ELF header, inside the program headers, inside each
     * loadable segment. */
    path = scratch_path("empty.so");
    CHECK(write_file(path, lib, 0));
    EXPECT_LOAD_ERROR(reg, path, PRT_ERR_MALFORMED, "the file is empty");
    path = scratch_path("cut3.so");
    CHECK(write_file(path, lib, 3));
    EXPECT_LOAD_ERROR(reg, path, PRT_ERR_MALFORMED,
                      "truncated: the ELF header needs 64 bytes, the file has 3");
    path = scratch_path("cut40.so");
    CHECK(write_file(path, lib, 40));
    EXPECT_LOAD_ERROR(reg, path, PRT_ERR_MALFORMED,
                      "truncated: the ELF header needs 64 bytes, the file has 40");
    path = scratch_path("cut_phdrs.so");
    CHECK(write_file(path, lib, eh.e_phoff + sizeof ph[0] + 7));
    snprintf(want, sizeof want,
             "truncated: the program headers end at byte "
             "%zu, the file has %zu",
             (size_t)eh.e_phoff + nb_ph * sizeof ph[0],
             (size_t)eh.e_phoff + sizeof ph[0] + 7);
    EXPECT_LOAD_ERROR(reg, path, PRT_ERR_MALFORMED, want);
    for (int i = 0; i < nb_ph; i++) {
        size_t end = ph[i].p_offset + ph[i].p_filesz, cut;
        char name[32];
        if (ph[i].p_type != PT_LOAD)
            continue;
        if (end > last_end)
            last_end = end;
        if (ph[i].p_filesz < 2 || end <= eh.e_phoff + nb_ph * sizeof ph[0])
            continue;
        cut = ph[i].p_offset + ph[i].p_filesz / 2;
        snprintf(name, sizeof name, "cut_segment%d.so", i);
        path = scratch_path(name);
        CHECK(write_file(path, lib, cut));
        /* The first segment whose end is past the cut is named. */
        for (int j = 0; j < nb_ph; j++)
            if (ph[j].p_type == PT_LOAD && ph[j].p_offset + ph[j].p_filesz > cut) {
                snprintf(want, sizeof want,
                         "truncated: segment %d ends at byte "
                         "%zu, the file has %zu",
                         j, (size_t)(ph[j].p_offset + ph[j].p_filesz), cut);
                break;
            }
        EXPECT_LOAD_ERROR(reg, path, PRT_ERR_MALFORMED, want);
    }
    /* Past the last segment only what the loader never reads is missing
     * (section headers): that copy loads, as does the whole one. */
    CHECK(last_end > 0 && last_end < size);
    path = scratch_path("cut_sections.so");
    CHECK(write_file(path, lib, last_end));
    CHECK_OK(prt_registry_load_library(reg, path));
    CHECK_OK(prt_registry_unload_library(reg, path));

    /* Not an ELF file at all. */
    {
        uint8_t noise[4096];
        tu_rng rng;
        tu_rng_seed(&rng, 7);
        for (size_t i = 0; i < sizeof noise; i++)
            noise[i] = (uint8_t)tu_rng_u64(&rng);
        noise[0] = 'x'; /* whatever the seed, no ELF magic */
        path = scratch_path("noise.so");
        CHECK(write_file(path, noise, sizeof noise));
        EXPECT_LOAD_ERROR(reg, path, PRT_ERR_MALFORMED, "not an ELF file");
        path = scratch_path("script.so");
        CHECK(write_file(path, "/* GNU ld script */\nINPUT(libfoo.so.1)\n", 39));
        EXPECT_LOAD_ERROR(reg, path, PRT_ERR_MALFORMED, "not an ELF file");
    }

    /* ELF, but not for this process. */
    {
        const uint8_t c32 = ELFCLASS32, msb = ELFDATA2MSB;
        const uint16_t exec = ET_EXEC, rel = ET_REL, phent = 32;
        const uint16_t other = eh.e_machine == EM_AARCH64 ? EM_X86_64 : EM_AARCH64;
        Elf64_Phdr big = ph[0];
        int last_load = 0;
        path = altered_copy(lib, size, "elf32.so", EI_CLASS, &c32, 1);
        EXPECT_LOAD_ERROR(reg, path, PRT_ERR_MALFORMED,
                          "a 32-bit ELF file, this process loads 64-bit ones");
        path = altered_copy(lib, size, "msb.so", EI_DATA, &msb, 1);
        EXPECT_LOAD_ERROR(reg, path, PRT_ERR_MALFORMED, "a big-endian ELF file");
        path = altered_copy(lib, size, "machine.so", offsetof(Elf64_Ehdr, e_machine),
                            &other, 2);
        snprintf(want, sizeof want, "(ELF machine %u), this process runs on",
                 (unsigned)other);
        EXPECT_LOAD_ERROR(reg, path, PRT_ERR_MALFORMED, want);
        path = altered_copy(lib, size, "exec.so", offsetof(Elf64_Ehdr, e_type), &exec, 2);
        EXPECT_LOAD_ERROR(reg, path, PRT_ERR_MALFORMED,
                          "an executable, not a "
                          "shared library");
        path =
            altered_copy(lib, size, "object.so", offsetof(Elf64_Ehdr, e_type), &rel, 2);
        EXPECT_LOAD_ERROR(reg, path, PRT_ERR_MALFORMED, "a relocatable object");
        path = altered_copy(lib, size, "phent.so", offsetof(Elf64_Ehdr, e_phentsize),
                            &phent, 2);
        EXPECT_LOAD_ERROR(reg, path, PRT_ERR_MALFORMED,
                          "program header entries of 32 bytes, not 56");
        /* A whole file whose last loadable segment claims more of it than
         * there is. */
        for (int i = 0; i < nb_ph; i++)
            if (ph[i].p_type == PT_LOAD)
                last_load = i;
        big = ph[last_load];
        big.p_filesz = size;
        path =
            altered_copy(lib, size, "lying_segment.so",
                         eh.e_phoff + (size_t)last_load * sizeof big, &big, sizeof big);
        snprintf(want, sizeof want,
                 "truncated: segment %d ends at byte %zu, "
                 "the file has %zu",
                 last_load, (size_t)big.p_offset + size, size);
        EXPECT_LOAD_ERROR(reg, path, PRT_ERR_MALFORMED, want);
    }

    /* Not a regular file: a FIFO is refused without waiting for a writer. */
    path = scratch_path("fifo.so");
    CHECK(mkfifo(path, 0600) == 0);
    EXPECT_LOAD_ERROR(reg, path, PRT_ERR_IO, "not a regular file");
    unlink(path);

    /* The intact copy loads, hashed like the original, and still works. */
    path = scratch_path("intact.so");
    CHECK(write_file(path, lib, size));
    CHECK_OK(prt_registry_load_library(reg, path));
    {
        const prt_plugin_creator *c = NULL;
        uint64_t hash = 0;
        CHECK_OK(prt_registry_find_creator(reg, "test", "Foo", "1", &c));
        CHECK(strcmp(foo_flavour(c), "a") == 0);
        CHECK(prt_registry_get_creator_library(reg, c, &hash) != NULL);
        CHECK(hash == base_fnv1a64(lib, size, BASE_FNV_SEED));
    }
    prt_registry_destroy(reg);
done : {
    static const char *const names[] = {
        "empty.so", "cut3.so",   "cut40.so", "cut_phdrs.so",     "cut_sections.so",
        "noise.so", "script.so", "elf32.so", "msb.so",           "machine.so",
        "exec.so",  "object.so", "phent.so", "lying_segment.so", "intact.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unlink(scratch_path(names[i]));
    for (int i = 0; i < 32; i++) {
        char name[32];
        snprintf(name, sizeof name, "cut_segment%d.so", i);
        unlink(scratch_path(name));
    }
    rmdir(scratch);
}
    free(lib);
}

/* One file under three names; then another file under the first name while
 * the process still holds the old one. */
static void test_file_identity(void)
{
    prt_registry *ra = NULL, *rb = NULL;
    const prt_plugin_creator *c = NULL;
    uint8_t *a, *b;
    size_t na = 0, nb = 0;
    uint64_t hash = 0;
    char p[320], sym[320], hard[320], fresh[320];

    a = read_file(FOO_A, &na);
    b = read_file(FOO_B, &nb);
    CHECK_OK(prt_registry_create(&ra));
    CHECK_OK(prt_registry_create(&rb));
    if (!a || !b || !ra || !rb || !make_scratch()) {
        CHECK(0);
        goto done;
    }
    snprintf(p, sizeof p, "%s", scratch_path("p.so"));
    snprintf(sym, sizeof sym, "%s", scratch_path("sym.so"));
    snprintf(hard, sizeof hard, "%s", scratch_path("hard.so"));
    snprintf(fresh, sizeof fresh, "%s", scratch_path("fresh.so"));
    CHECK(write_file(p, a, na));
    CHECK(symlink("p.so", sym) == 0 && link(p, hard) == 0);

    /* One file is one library, whatever the name: once per registry. */
    CHECK_OK(prt_registry_load_library(ra, p));
    CHECK_ERR(prt_registry_load_library(ra, sym), PRT_ERR_ALREADY_EXISTS,
              "already loaded into this registry as");
    CHECK(strstr(prt_last_error(), p) != NULL);
    CHECK_ERR(prt_registry_load_library(ra, hard), PRT_ERR_ALREADY_EXISTS,
              "already loaded into this registry as");
    CHECK(prt_registry_creator_count(ra) == 1);
    /* Another registry may hold it too, under another name, same hash. */
    CHECK_OK(prt_registry_load_library(rb, hard));
    CHECK_OK(prt_registry_find_creator(rb, "test", "Foo", "1", &c));
    CHECK(strcmp(foo_flavour(c), "a") == 0);
    CHECK(prt_registry_get_creator_library(rb, c, &hash) != NULL);
    CHECK(hash == base_fnv1a64(a, na, BASE_FNV_SEED));
    CHECK_OK(prt_registry_unload_library(rb, hard));

    /* p.so is replaced (a new file renamed over it) while ra holds the old
     * one. The dynamic loader would hand rb that old code for the name;
     * recording it under the new file's hash would be a lie. */
    CHECK(write_file(fresh, b, nb) && rename(fresh, p) == 0);
    CHECK_ERR(prt_registry_load_library(rb, p), PRT_ERR_ALREADY_EXISTS,
              "from a file that has since been replaced");
    CHECK(strstr(prt_last_error(), p) != NULL);
    CHECK(prt_registry_creator_count(rb) == 0 && !libraries_mention(rb, p));
    /* Once no registry holds the old one, the new file loads. */
    CHECK_OK(prt_registry_unload_library(ra, p));
    CHECK_OK(prt_registry_load_library(rb, p));
    c = NULL;
    CHECK_OK(prt_registry_find_creator(rb, "test", "Foo", "1", &c));
    CHECK(strcmp(foo_flavour(c), "b") == 0);
    CHECK(prt_registry_get_creator_library(rb, c, &hash) != NULL);
    CHECK(hash == base_fnv1a64(b, nb, BASE_FNV_SEED));
done:
    prt_registry_destroy(ra);
    prt_registry_destroy(rb);
    if (scratch[0]) {
        unlink(scratch_path("p.so"));
        unlink(scratch_path("sym.so"));
        unlink(scratch_path("hard.so"));
        unlink(scratch_path("fresh.so"));
        rmdir(scratch);
    }
    free(a);
    free(b);
}

/* ---- the standard plugin library ---------------------------------------- */

static void test_standard_library(void)
{
    static const struct {
        const char *ns, *name, *version;
    } want[] = {
        {"", "NonZeroPlugin", "1"},          {"", "CustomHardmax", "1"},
        {"example", "circ_pad_plugin", "1"}, {"example", "AddInPlace", "1"},
        {"example", "QuantFC", "1"},
    };
    prt_registry *reg = NULL;

    CHECK_OK(prt_registry_create(&reg));
    if (!reg)
        return;
    CHECK_OK(prt_registry_load_library(reg, PRT_PLUGINS_PATH));
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const prt_plugin_creator *c = NULL;
        uint64_t hash = 0;
        const char *path;
        CHECK_OK(prt_registry_find_creator(reg, want[i].ns, want[i].name, want[i].version,
                                           &c));
        if (!c)
            continue;
        CHECK(strcmp(c->name, want[i].name) == 0);
        CHECK(strcmp(c->plugin_namespace, want[i].ns) == 0);
        path = prt_registry_get_creator_library(reg, c, &hash);
        CHECK(path && strcmp(path, PRT_PLUGINS_PATH) == 0);
        CHECK(hash != 0);
    }
    /* Default namespace and version reach the un-namespaced ones. */
    {
        const prt_plugin_creator *c = NULL;
        CHECK_OK(prt_registry_find_creator(reg, NULL, "NonZeroPlugin", NULL, &c));
    }
    /* Every creator, with its field schema (the registry vetted them). */
    for (int32_t i = 0; i < prt_registry_creator_count(reg); i++) {
        const prt_plugin_creator *c = prt_registry_get_creator(reg, i);
        CHECK(c && c->name && c->version && c->plugin_namespace && c->create);
        if (!c)
            continue;
        CHECK(c->nb_fields == 0 || c->fields != NULL);
        for (int32_t f = 0; c->fields && f < c->nb_fields; f++) {
            CHECK(c->fields[f].name != NULL);
            CHECK(c->fields[f].type >= 0 && c->fields[f].type < PRT_FIELD_TYPE_COUNT);
        }
    }
    prt_registry_destroy(reg);
}

/* Listing creators with their field schemas, on a registry we control. */
static void test_listing(void)
{
    prt_registry *reg = NULL;
    int found_alpha = 0, found_axis = 0;

    CHECK_OK(prt_registry_create(&reg));
    if (!reg)
        return;
    CHECK_OK(prt_registry_add_creator(reg, &gamma_creator));
    CHECK_OK(prt_registry_load_library(reg, FOO_A));
    CHECK(prt_registry_creator_count(reg) == 2);
    for (int32_t i = 0; i < prt_registry_creator_count(reg); i++) {
        const prt_plugin_creator *c = prt_registry_get_creator(reg, i);
        for (int32_t f = 0; c && f < c->nb_fields; f++) {
            const prt_field_schema *s = &c->fields[f];
            if (strcmp(c->name, "Foo") == 0 && strcmp(s->name, "alpha") == 0)
                found_alpha = s->type == PRT_FIELD_FLOAT32 && s->length == 1;
            if (strcmp(c->name, "Gamma") == 0 && strcmp(s->name, "axis") == 0)
                found_axis = s->type == PRT_FIELD_INT32;
        }
    }
    CHECK(found_alpha);
    CHECK(found_axis);
    prt_registry_destroy(reg);
}

/* ---- allocation failure ------------------------------------------------- */

/* Fails the n-th allocation for n = 0, 1, ... through create, add and load,
 * until the whole sequence succeeds; every failure must be a clean
 * PRT_ERR_OUT_OF_MEMORY that leaves the registry usable and leaks nothing. */
static void test_alloc_failure(void)
{
    int64_t n;
    int done = 0;
    for (n = 0; n < 200 && !done; n++) {
        prt_registry *reg = NULL;
        const prt_plugin_creator *c = NULL;
        prt_status st;
        int32_t before = -1;

        base_fail_alloc_after(n);
        st = prt_registry_create(&reg);
        CHECK((st == PRT_OK) == (reg != NULL)); /* *out untouched on failure */
        if (st == PRT_OK)
            st = prt_registry_add_creator(reg, &gamma_creator);
        if (st == PRT_OK)
            st = prt_registry_add_creator(reg, &gamma2_creator);
        if (st == PRT_OK) {
            before = prt_registry_creator_count(reg);
            st = prt_registry_load_library(reg, FOO_A);
        }
        if (st == PRT_OK)
            st = prt_registry_load_library(reg, LIB("testlib_malformed"));
        if (st == PRT_OK)
            st = prt_registry_find_creator(reg, "test", "Foo", "1", &c);
        base_fail_alloc_after(-1);

        if (st == PRT_OK) {
            done = 1;
            CHECK(prt_registry_creator_count(reg) == 4);
            CHECK(strcmp(foo_flavour(c), "a") == 0);
        } else {
            CHECK_ERR(st, PRT_ERR_OUT_OF_MEMORY, "out of memory");
            if (reg && before >= 0) {
                /* A failed load leaves no trace of that library; the
                 * registry still works. */
                int32_t count = prt_registry_creator_count(reg);
                CHECK(count == before || count == before + 1);
                if (count == before) {
                    CHECK_ERR(prt_registry_find_creator(reg, "test", "Foo", "1", &c),
                              PRT_ERR_NOT_FOUND, "test::Foo@1");
                    CHECK_OK(prt_registry_load_library(reg, FOO_A));
                }
            }
        }
        prt_registry_destroy(reg);
    }
    CHECK(done);
    CHECK(n > 3); /* create, add, and load did allocate */
}

int main(void)
{
    test_direct();
    test_bad_creators();
    test_load_unload();
    test_side_by_side();
    test_bad_libraries();
    test_damaged_files();
    test_file_identity();
    test_describe();
    test_listing();
    test_alloc_failure();
    test_standard_library();
    return tu_finish("test_registry");
}
