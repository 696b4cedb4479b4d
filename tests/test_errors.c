/*
 * Error messages and log lines: names from files and plugins reach them, so
 * they never carry control bytes or broken UTF-8 to a user's terminal.
 */
#include <stddef.h>
#include <string.h>

#include "base/base.h"
#include "testutil.h"

/* 1 if s has no byte below 0x20, no DEL and no byte that is not part of a
 * valid UTF-8 sequence (checked loosely: no 0xff/0xfe, no lone 0x80-0xbf
 * after ASCII). */
static int clean(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    for (; *p; p++) {
        if (*p < 0x20 || *p == 0x7f || *p == 0xff || *p == 0xfe)
            return 0;
        if (*p >= 0x80 && *p < 0xc0 && (p == (const unsigned char *)s || p[-1] < 0x80))
            return 0;
    }
    return 1;
}

static void test_error_escaped(void)
{
    prt_registry *reg = NULL;
    const prt_plugin_creator *c = NULL;
    const char *evil = "Foo\x1b[31m\xff\x01"
                       "bar";
    CHECK_OK(prt_registry_create(&reg));
    CHECK_ERR(prt_registry_find_creator(reg, "", evil, "1", &c), PRT_ERR_NOT_FOUND,
              "Foo\\x1b[31m\\xff\\x01bar");
    CHECK(clean(prt_last_error()));
    prt_registry_destroy(reg);
}

static void test_utf8_kept(void)
{
    /* Valid UTF-8 (é, ∑, 𝔸) passes unchanged; broken sequences do not:
     * an overlong '/', a lone continuation byte, a surrogate, a truncated
     * sequence at the end. */
    base_error(PRT_ERR_SHAPE, "tensor '%s'", "caf\xc3\xa9 \xe2\x88\x91 \xf0\x9d\x94\xb8");
    CHECK(strcmp(prt_last_error(),
                 "tensor 'caf\xc3\xa9 \xe2\x88\x91 \xf0\x9d\x94\xb8'") == 0);
    base_error(PRT_ERR_SHAPE, "%s", "a\xc0\xaf b\x80 c\xed\xa0\x80 d\xe2\x88");
    CHECK(strcmp(prt_last_error(), "a\\xc0\\xaf b\\x80 c\\xed\\xa0\\x80 d\\xe2\\x88") ==
          0);
    CHECK(clean(prt_last_error()));
    /* C1 controls are valid UTF-8 but act on terminals (U+009B is CSI):
     * escaped byte by byte; U+00A0 just past them passes. */
    base_error(PRT_ERR_SHAPE, "%s",
               "n\xc2\x9b"
               "2J \xc2\x85 \xc2\x80 \xc2\xa0");
    CHECK(strcmp(prt_last_error(), "n\\xc2\\x9b2J \\xc2\\x85 \\xc2\\x80 \xc2\xa0") == 0);
}

static void test_prefix_and_plugin_messages(void)
{
    const prt_host_services *hs = prt_host_services_get();
    hs->set_error(hs->host, PRT_ERR_PLUGIN, "plugin says \x1b]0;title\x07 hi");
    CHECK(strcmp(prt_last_error(), "plugin says \\x1b]0;title\\x07 hi") == 0);
    base_error_prefix(PRT_ERR_PLUGIN, "layer '%s'", "L\nx");
    CHECK(strcmp(prt_last_error(),
                 "layer 'L\\x0ax': plugin says \\x1b]0;title\\x07 hi") == 0);
    CHECK(clean(prt_last_error()));
}

/* A message at the buffer's end is cut at a whole escape, never inside one. */
static void test_long_message_cut_cleanly(void)
{
    char big[5000];
    memset(big, '\x1b', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    base_error(PRT_ERR_SHAPE, "%s", big);
    CHECK(clean(prt_last_error()));
    CHECK(strlen(prt_last_error()) % 4 == 0 && strlen(prt_last_error()) > 1000);
}

static char logged[4096];
static void capture(void *user, int32_t severity, const char *message)
{
    (void)user, (void)severity;
    snprintf(logged, sizeof logged, "%s", message);
}

static void test_log_escaped(void)
{
    prt_set_logger(capture, NULL, PRT_SEV_VERBOSE);
    base_log(PRT_SEV_WARNING, "node '%s' ignored", "\x1b[2J");
    CHECK(strcmp(logged, "node '\\x1b[2J' ignored") == 0);
    prt_set_logger(NULL, NULL, 0);
}

/* A plugin with a hole in a table: the message names the entry. */
static const char *np_str(const prt_plugin *p)
{
    (void)p;
    return "Holey";
}
static uint32_t np_devices(const prt_plugin *p)
{
    (void)p;
    return 1u;
}
static prt_status np_enqueue(prt_plugin *p, const prt_tensor_desc *i,
                             const prt_tensor_desc *o, const void *const *x,
                             void *const *y, void *w, int32_t d, void *s)
{
    (void)p, (void)i, (void)o, (void)x, (void)y, (void)w, (void)d, (void)s;
    return PRT_OK;
}

static void test_table_entry_named(void)
{
    static const prt_plugin_core core = {
        sizeof core, PRT_PLUGIN_ABI_VERSION, np_str, np_str, np_str, np_devices};
    static const prt_plugin_runtime rt = {
        sizeof rt, PRT_PLUGIN_ABI_VERSION, NULL, NULL, np_enqueue, NULL, NULL, NULL,
        NULL};
    static const prt_plugin_vtable vt = {sizeof vt, PRT_PLUGIN_ABI_VERSION, &core, NULL,
                                         &rt};
    static const prt_plugin_core short_core = {offsetof(prt_plugin_core, devices),
                                               PRT_PLUGIN_ABI_VERSION,
                                               np_str,
                                               np_str,
                                               np_str,
                                               np_devices};
    static const prt_plugin_vtable vt2 = {sizeof vt2, PRT_PLUGIN_ABI_VERSION, &short_core,
                                          NULL, &rt};
    prt_plugin p = {&vt}, q = {&vt2};
    prt_network *net = NULL;
    int32_t x, l;
    prt_dims d = {1, {4}};
    CHECK_OK(prt_network_create(&net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_FLOAT32, &d, &x));
    CHECK_ERR(
        prt_network_add_plugin(net, &x, 1, NULL, 0, &p, &l), PRT_ERR_PLUGIN,
        "runtime table is incomplete: it lacks the required entry 'attach_to_context'");
    CHECK_ERR(prt_network_add_plugin(net, &x, 1, NULL, 0, &q, &l), PRT_ERR_PLUGIN,
              "lacks the required entry 'devices'");
    prt_network_destroy(net);
}

int main(void)
{
    test_error_escaped();
    test_utf8_kept();
    test_prefix_and_plugin_messages();
    test_long_message_cut_cleanly();
    test_log_escaped();
    test_table_entry_named();
    return tu_finish("test_errors");
}
