/*
 * Plugin libraries carried inside an engine (embedded.c; the LIBS section
 * of format.c): built from a copy of the standard plugin library loaded
 * from a private path, the engine loads without that file only when
 * allowed, runs AddInPlace to x + b exactly, takes the caller's library of
 * the same hash first, shares one copy per process, and refuses a changed
 * library, a bad name, a library no layer uses and a layer whose library
 * is missing. Damage behind a right checksum in the section is a clean
 * error, and no temporary file outlives a load.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine_impl.h"
#include "plan_bytes.h"
#include "testutil.h"

#define TAG_LIBS 0x5342494cu /* "LIBS" little-endian */

static char g_dir[256]; /* this test's scratch directory */
static char g_tmp[300]; /* TMPDIR for the loads */
static char g_lib[300]; /* the copy of the plugin library */

static int copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    char buf[65536];
    size_t n;
    int ok = a && b;
    while (ok && (n = fread(buf, 1, sizeof buf, a)) > 0)
        ok = fwrite(buf, 1, n, b) == n;
    if (a)
        fclose(a);
    if (b && fclose(b) != 0)
        ok = 0;
    return ok;
}

/* Entries in TMPDIR (every load must leave it empty). */
static int tmp_entries(void)
{
    DIR *d = opendir(g_tmp);
    struct dirent *de;
    int n = 0;
    if (!d)
        return -1;
    while ((de = readdir(d)))
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* x[2x3], b -> AddInPlace -> y from `reg`, built with embed as given. */
static prt_status build(prt_registry *reg, int embed, prt_engine **out)
{
    const int64_t d[2] = {2, 3};
    prt_dims dims = tu_dims(2, d);
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_plugin *p = NULL;
    int32_t x, b, layer, y;
    prt_status st;
    *out = NULL;
    if ((st = prt_network_create(&net)) || (st = prt_builder_config_create(&cfg)))
        goto done;
    if ((st = prt_network_add_input(net, "x", PRT_FLOAT32, &dims, &x)) ||
        (st = prt_network_add_input(net, "b", PRT_FLOAT32, &dims, &b)))
        goto done;
    p = tu_make_plugin(reg, "example", "AddInPlace", "1", NULL, 0);
    if (!p) {
        st = PRT_ERR_PLUGIN;
        goto done;
    }
    {
        int32_t ins[2] = {x, b};
        st = prt_network_add_plugin(net, ins, 2, NULL, 0, p, &layer);
        if (st)
            goto done;
    }
    if ((st = prt_network_get_layer_output(net, layer, 0, &y)) ||
        (st = prt_network_set_tensor_name(net, y, "y")) ||
        (st = prt_network_mark_output(net, y)) ||
        (st = prt_builder_config_set_embed_plugins(cfg, embed)))
        goto done;
    st = prt_engine_build(net, cfg, reg, out);
done:
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
}

static int serialize(const prt_engine *e, uint8_t **bytes, size_t *size)
{
    void *p = NULL;
    if (prt_engine_serialize(e, &p, size) != PRT_OK)
        return 0;
    *bytes = p;
    return 1;
}

/* Runs the engine once and checks y = x + b exactly. */
static void check_runs(const prt_engine *e)
{
    float x[6], b[6], y[6];
    prt_context *ctx = NULL;
    for (int i = 0; i < 6; i++) {
        x[i] = (float)i * 1.25f - 3.0f;
        b[i] = (float)(i * i) * 0.5f;
        y[i] = -1.0f;
    }
    CHECK_OK(prt_context_create(e, &ctx));
    if (!ctx)
        return;
    CHECK_OK(prt_context_set_tensor_address(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor_address(ctx, "b", b));
    CHECK_OK(prt_context_set_tensor_address(ctx, "y", y));
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    for (int i = 0; i < 6; i++)
        CHECK(y[i] == x[i] + b[i]);
    prt_context_destroy(ctx);
}

static int32_t source_of(const prt_engine *e)
{
    prt_embedded_library_info li = {.struct_size = sizeof li};
    if (prt_engine_get_embedded_library(e, 0, &li) != PRT_OK)
        return -1;
    return li.source;
}

static const prt_deserialize_options allow = {sizeof(prt_deserialize_options),
                                              PRT_EMBEDDED_PLUGIN_LIBRARIES};

static void test_load(const uint8_t *plan, size_t n, uint64_t hash)
{
    prt_registry *empty = NULL, *with = NULL;
    prt_engine *e = NULL, *e2 = NULL;
    prt_deserialize_options none = {sizeof none, 0},
                            code = {sizeof code, PRT_EMBEDDED_CODE};
    prt_embedded_library_info li = {.struct_size = sizeof li};
    const prt_plugin_creator *c1 = NULL, *c2 = NULL;

    CHECK_OK(prt_registry_create(&empty));
    /* Not allowed: refused, naming the library and the option. */
    CHECK_ERR(prt_engine_deserialize(empty, plan, n, &e), PRT_ERR_UNSUPPORTED,
              "libembed_copy.so");
    CHECK(strstr(prt_last_error(), "allow_embedded") != NULL);
    CHECK(e == NULL);
    CHECK_ERR(prt_engine_deserialize_with_options(empty, plan, n, &none, &e),
              PRT_ERR_UNSUPPORTED, "PRT_EMBEDDED_PLUGIN_LIBRARIES");
    /* Kernels alone do not allow libraries. */
    none.allow_embedded = PRT_EMBEDDED_KERNELS;
    CHECK_ERR(prt_engine_deserialize_with_options(empty, plan, n, &none, &e),
              PRT_ERR_UNSUPPORTED, "libembed_copy.so");
    none.struct_size = 2;
    CHECK_ERR(prt_engine_deserialize_with_options(empty, plan, n, &none, &e),
              PRT_ERR_INVALID_ARGUMENT, "struct_size");
    CHECK(tmp_entries() == 0);

    /* Allowed: from the engine's bytes, with or without a registry. */
    CHECK_OK(prt_engine_deserialize_with_options(empty, plan, n, &allow, &e));
    if (e) {
        CHECK(prt_engine_embedded_library_count(e) == 1);
        CHECK_OK(prt_engine_get_embedded_library(e, 0, &li));
        CHECK(strcmp(li.name, "libembed_copy.so") == 0);
        CHECK(li.hash == hash);
        CHECK(li.source == PRT_EMBEDDED_LIBRARY_FROM_ENGINE);
        CHECK_ERR(prt_engine_get_embedded_library(e, 1, &li), PRT_ERR_INVALID_ARGUMENT,
                  "outside");
        check_runs(e);
        /* The caller's registry is left as it was. */
        CHECK(prt_registry_creator_count(empty) == 0);
    }
    CHECK(tmp_entries() == 0);
    /* A second engine shares the process's copy: the same creator. */
    CHECK_OK(prt_engine_deserialize_with_options(NULL, plan, n, &code, &e2));
    if (e && e2) {
        CHECK(source_of(e2) == PRT_EMBEDDED_LIBRARY_FROM_ENGINE);
        CHECK_OK(prt_registry_find_creator(e->embedded_reg, "example", "AddInPlace", "1",
                                           &c1));
        CHECK_OK(prt_registry_find_creator(e2->embedded_reg, "example", "AddInPlace", "1",
                                           &c2));
        CHECK(c1 != NULL && c1 == c2);
        check_runs(e2);
    }
    prt_engine_destroy(e);
    e = NULL;
    /* The first engine's copy gone, the second's still runs. */
    if (e2)
        check_runs(e2);
    prt_engine_destroy(e2);
    e2 = NULL;

    /* A TMPDIR that cannot hold the copy: a clean error naming it. */
    setenv("TMPDIR", "/nonexistent-plugrt-dir", 1);
    CHECK_ERR(prt_engine_deserialize_with_options(NULL, plan, n, &allow, &e), PRT_ERR_IO,
              "/nonexistent-plugrt-dir");
    CHECK(e == NULL);
    setenv("TMPDIR", g_tmp, 1);
    CHECK(tmp_entries() == 0);
    /* The caller's library of the same hash takes precedence, unasked. */
    with = tu_registry_with_plugins();
    CHECK_OK(prt_engine_deserialize(with, plan, n, &e));
    if (e) {
        CHECK(source_of(e) == PRT_EMBEDDED_LIBRARY_FROM_REGISTRY);
        CHECK(e->embedded_reg == NULL);
        check_runs(e);
    }
    prt_engine_destroy(e);
    e = NULL;

    /* Inspection reads it and loads nothing. */
    CHECK_OK(prt_engine_deserialize_unresolved(plan, n, &e));
    if (e)
        CHECK(source_of(e) == PRT_EMBEDDED_LIBRARY_NOT_LOADED && !e->embedded_reg);
    prt_engine_destroy(e);
    e = NULL;

    prt_registry_destroy(with);
    prt_registry_destroy(empty);
}

/* What engine_validate says of a loaded engine changed by `edit`. */
static void expect_invalid(const uint8_t *plan, size_t n, void (*edit)(prt_engine *),
                           const char *sub)
{
    prt_engine *e = NULL;
    CHECK_OK(prt_engine_deserialize_unresolved(plan, n, &e));
    if (!e)
        return;
    edit(e);
    CHECK_ERR(engine_validate(e), PRT_ERR_MALFORMED, sub);
    prt_engine_destroy(e);
}

static void edit_slash(prt_engine *e)
{
    e->libraries[0].name[3] = '/';
}
static void edit_dotdot(prt_engine *e)
{
    strcpy(e->libraries[0].name, "..");
}
static void edit_byte(prt_engine *e)
{
    e->libraries[0].bytes[e->libraries[0].size / 2] ^= 1;
}
static void edit_layer_hash(prt_engine *e)
{
    e->layers[0].library_hash ^= 1; /* its library no longer stored */
}
static void edit_twice(prt_engine *e)
{
    eng_library *l = base_realloc(e->libraries, 2 * sizeof *l);
    if (!l)
        return;
    e->libraries = l;
    l[1] = l[0];
    l[1].name = base_strdup(l[0].name);
    l[1].bytes = base_malloc((size_t)l[0].size);
    memcpy(l[1].bytes, l[0].bytes, (size_t)l[0].size);
    e->nb_libraries = 2;
}
static void edit_unused(prt_engine *e)
{
    edit_twice(e);
    if (e->nb_libraries == 2) {
        e->libraries[1].bytes[0] ^= 1;
        e->libraries[1].hash = base_fnv1a64(e->libraries[1].bytes,
                                            (size_t)e->libraries[1].size, BASE_FNV_SEED);
    }
}

static void test_validate(const uint8_t *plan, size_t n)
{
    expect_invalid(plan, n, edit_slash, "not a plain file name");
    expect_invalid(plan, n, edit_dotdot, "starts with '.'");
    expect_invalid(plan, n, edit_byte, "do not hash to its content hash");
    expect_invalid(plan, n, edit_layer_hash, "which the engine does not carry");
    expect_invalid(plan, n, edit_twice, "the same content hash");
    expect_invalid(plan, n, edit_unused, "serves no layer");
}

/* Every byte of the section's head (count, name, hash, size, the start of
 * the library), changed behind a right checksum, and every cut there: a
 * clean error or an engine that validates, never a crash. */
static void test_damage(const uint8_t *plan, size_t n)
{
    size_t at = tu_plan_section_at(plan, TAG_LIBS);
    uint8_t *c = malloc(n);
    int accepted = 0;
    /* The payload: u32 count, then the first library's u32 name length. */
    size_t name_at = at + 8, name_len = at ? (size_t)plan[at + 4] : 0;
    CHECK(at > 0 && c);
    if (!at || !c) {
        free(c);
        return;
    }
    /* From the section's header (tag, flags, length) to past the ELF
     * header. */
    for (size_t i = at - 16; i < at + 8 + name_len + 8 + 8 + 64 && i < n - 4; i++) {
        for (int bit = 0; bit < 8; bit += 3) {
            prt_engine *e = NULL;
            prt_status st;
            memcpy(c, plan, n);
            c[i] ^= (uint8_t)(1u << bit);
            tu_plan_fix_crc(c, n);
            st = prt_engine_deserialize_unresolved(c, n, &e);
            if (st == PRT_OK) {
                accepted++;
                /* Only the name is a label another byte can make, and
                 * the OPTIONAL flag is one this reader need not heed. */
                CHECK((i >= name_at && i < name_at + name_len) ||
                      (i == at - 12 && bit == 0));
                CHECK(engine_validate(e) == PRT_OK);
            } else {
                CHECK(st == PRT_ERR_MALFORMED || st == PRT_ERR_VERSION);
                CHECK(prt_last_error()[0] != '\0');
            }
            prt_engine_destroy(e);
        }
    }
    CHECK(accepted > 0); /* a name changed within its character set */
    for (size_t cut = at; cut < n - 4; cut += (cut < at + 128 ? 1 : 4099)) {
        prt_engine *e = NULL;
        memcpy(c, plan, cut);
        memcpy(c + cut, plan + n - 4, 4);
        tu_plan_fix_crc(c, cut + 4);
        CHECK_ERR(prt_engine_deserialize_unresolved(c, cut + 4, &e), PRT_ERR_MALFORMED,
                  "malformed engine");
        CHECK(e == NULL);
        prt_engine_destroy(e);
    }
    free(c);
}

/* Every allocation of a load from the engine's bytes failing in turn: a
 * clean error each time, nothing left in TMPDIR, then a load that runs.
 * (The process holds no copy of the library between tries: each failed
 * load closes what it opened.) */
static void test_alloc_failures(const uint8_t *plan, size_t n)
{
    prt_status st = PRT_ERR_INTERNAL;
    int64_t k;
    for (k = 0; k < 20000; k++) {
        prt_engine *e = NULL;
        base_fail_alloc_after(k);
        st = prt_engine_deserialize_with_options(NULL, plan, n, &allow, &e);
        base_fail_alloc_after(-1);
        if (st == PRT_OK) {
            CHECK(e && source_of(e) == PRT_EMBEDDED_LIBRARY_FROM_ENGINE);
            if (e)
                check_runs(e);
            prt_engine_destroy(e);
            break;
        }
        CHECK(e == NULL && prt_last_error()[0] != '\0');
        CHECK(tmp_entries() == 0);
    }
    CHECK(st == PRT_OK && k > 10);
    printf("load with embedded libraries: %lld allocation failures injected\n",
           (long long)k);
}

static void test_build_errors(void)
{
    prt_registry *reg = tu_registry_with_plugins(), *direct = NULL, *copy = NULL;
    const prt_plugin_creator *c = NULL;
    prt_engine *e = NULL;
    char changed[320];
    FILE *f;
    /* A creator added directly has no library to carry. */
    CHECK_OK(prt_registry_create(&direct));
    if (reg && direct &&
        prt_registry_find_creator(reg, "example", "AddInPlace", "1", &c) == PRT_OK) {
        CHECK_OK(prt_registry_add_creator(direct, c));
        CHECK_ERR(build(direct, 1, &e), PRT_ERR_UNSUPPORTED, "registered directly");
        CHECK(e == NULL);
        CHECK_OK(build(direct, 0, &e)); /* without embedding, as before */
        prt_engine_destroy(e);
        e = NULL;
    }
    /* A library file changed since it was loaded. */
    snprintf(changed, sizeof changed, "%s/libchanged.so", g_dir);
    CHECK(copy_file(g_lib, changed));
    CHECK_OK(prt_registry_create(&copy));
    CHECK_OK(prt_registry_load_library(copy, changed));
    if ((f = fopen(changed, "ab"))) {
        fputc(0, f);
        fclose(f);
    }
    CHECK_ERR(build(copy, 1, &e), PRT_ERR_IO, "has changed since it was loaded");
    CHECK(e == NULL);
    prt_registry_destroy(copy);
    prt_registry_destroy(direct);
    prt_registry_destroy(reg);
    CHECK_ERR(prt_builder_config_set_embed_plugins(NULL, 1), PRT_ERR_INVALID_ARGUMENT,
              "NULL");
}

int main(void)
{
    prt_registry *reg = NULL;
    prt_engine *built = NULL, *plain = NULL;
    uint8_t *plan = NULL, *plain_plan = NULL;
    size_t n = 0, pn = 0;
    uint64_t hash = 0;
    snprintf(g_dir, sizeof g_dir, "/tmp/test_embedded_libs.%d", (int)getpid());
    snprintf(g_tmp, sizeof g_tmp, "%s/tmp", g_dir);
    snprintf(g_lib, sizeof g_lib, "%s/libembed_copy.so", g_dir);
    CHECK(mkdir(g_dir, 0700) == 0 && mkdir(g_tmp, 0700) == 0);
    CHECK(copy_file(PRT_PLUGINS_PATH, g_lib));
    setenv("TMPDIR", g_tmp, 1);

    CHECK_OK(prt_registry_create(&reg));
    CHECK_OK(prt_registry_load_library(reg, g_lib));
    CHECK_OK(build(reg, 1, &built));
    CHECK_OK(build(reg, 0, &plain));
    if (built && plain && serialize(built, &plan, &n) &&
        serialize(plain, &plain_plan, &pn)) {
        prt_layer_info li = {.struct_size = sizeof li};
        CHECK_OK(prt_engine_get_layer(built, 0, &li));
        hash = li.library_hash;
        CHECK(hash != 0);
        CHECK(prt_engine_embedded_library_count(built) == 1);
        CHECK(prt_engine_embedded_library_count(plain) == 0);
        CHECK(tu_plan_section_at(plain_plan, TAG_LIBS) == 0);
        /* The built engine's library is the file's, whole. */
        {
            struct stat sb;
            CHECK(stat(g_lib, &sb) == 0 && n > pn + (size_t)sb.st_size);
        }
        /* The copy the engine was built from is gone: only the engine
         * holds the code now (the registry's mapping aside). */
        /* Engines go before the registry that holds their plugins' code. */
        prt_engine_destroy(built);
        prt_engine_destroy(plain);
        built = plain = NULL;
        prt_registry_destroy(reg);
        reg = NULL;
        CHECK(unlink(g_lib) == 0);
        test_load(plan, n, hash);
        test_validate(plan, n);
        test_damage(plan, n);
        test_alloc_failures(plan, n);
        /* Serializing a loaded engine writes the library again. */
        {
            prt_engine *e = NULL;
            uint8_t *again = NULL;
            size_t m = 0;
            CHECK_OK(prt_engine_deserialize_with_options(NULL, plan, n, &allow, &e));
            CHECK(e && serialize(e, &again, &m) && m == n && memcmp(again, plan, n) == 0);
            prt_free(again);
            prt_engine_destroy(e);
        }
        CHECK(copy_file(PRT_PLUGINS_PATH, g_lib));
        test_build_errors();
    }
    prt_engine_destroy(built);
    prt_engine_destroy(plain);
    prt_registry_destroy(reg);
    prt_free(plan);
    prt_free(plain_plan);
    CHECK(tmp_entries() == 0);
    {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        CHECK(system(cmd) == 0);
    }
    return tu_finish("test_embedded_libs");
}
