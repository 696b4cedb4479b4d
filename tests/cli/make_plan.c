/*
 * Writes plans for the CLI tests through the C API, for what an ONNX file
 * cannot easily say.
 *
 *   make_plan OUT.plan ELEMS [hostile|reshape]
 *
 * The network is x (float32, 1 x ELEMS) -> Relu -> Relu -> y, so the
 * tensor between the two layers lives in the context's arena: about
 * 4 x ELEMS bytes of context memory (for --memory-limit). With `hostile`,
 * every tensor and layer name carries terminal escape sequences, a C1
 * control (U+009B, CSI), backslashes and bytes that are not UTF-8, as a
 * plan from an untrusted source might; the second layer's name is long
 * enough that its escaped form is cut.
 *
 * With `reshape`, the network is instead y = Reshape(x, s): x (float32,
 * 1 x ELEMS) and a shape input s (int64, 2 values in 1..ELEMS), whose values
 * the runtime reads on the host (for `plugrt run`'s binding of shape
 * inputs; the ONNX importer cannot give a network input value bounds).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugrt/plugrt.h"

/* Index 0: input, 1, 2: layers, 3: the tensor between them, 4: output. */
static const char *const plain_names[5] = {"x", "relu_1", "relu_2", "mid", "y"};
static const char *const hostile_names[5] = {
    /* ESC [ 31 m: red; 0xff is never UTF-8 */
    "in\x1b[31m\xff",
    /* OSC: retitles the window, ended by BEL */
    "relu\x1b]0;pwned\x07",
    /* a literal backslash; an overlong '/' */
    "relu\\x1b\xc0\xaf",
    /* CSI as UTF-8 (U+009B), then "2J": clears the screen (split, or the
     * hex escape would swallow the 2) */
    "mid\xc2\x9b"
    "2J",
    /* clear screen, 0xfe, CR, DEL */
    "out\x1b[2J\xfe\r\x7f"};

static int check(prt_status st, const char *what)
{
    if (st)
        fprintf(stderr, "make_plan: %s: %s [%s]\n", what, prt_last_error(),
                prt_status_name(st));
    return st != PRT_OK;
}

static int add_relu(prt_network *net, int32_t in, const char *layer_name, int32_t *out)
{
    const prt_plugin_creator *c;
    prt_field_collection none = {0, NULL};
    prt_plugin *p = NULL;
    int32_t layer;
    if (check(prt_builtin_find_creator("Relu", "1", &c), "Relu") ||
        check(c->create(c, layer_name, &none, PRT_PHASE_BUILD, &p), "create Relu"))
        return 1;
    if (check(prt_network_add_plugin(net, &in, 1, NULL, 0, p, &layer), "add Relu")) {
        p->vt->runtime->destroy(p);
        return 1;
    }
    return check(prt_network_set_layer_name(net, layer, layer_name), "layer name") ||
           check(prt_network_get_layer_output(net, layer, 0, out), "layer output");
}

/* y = Reshape(x, s), s a shape input with value bounds 1..elems. */
static int make_reshape(prt_network *net, prt_builder_config *cfg, long elems)
{
    const prt_plugin_creator *c;
    prt_field_collection none = {0, NULL};
    prt_plugin *p = NULL;
    prt_dims xd = {2, {1, elems}}, sd = {1, {2}};
    int64_t mn[2] = {1, 1}, opt[2] = {1, elems}, mx[2] = {elems, elems};
    int32_t x, s, layer, y, profile;
    if (check(prt_network_add_input(net, "x", PRT_FLOAT32, &xd, &x), "input x") ||
        check(prt_network_add_input(net, "s", PRT_INT64, &sd, &s), "input s") ||
        check(prt_builtin_find_creator("Reshape", "1", &c), "Reshape") ||
        check(c->create(c, "reshape", &none, PRT_PHASE_BUILD, &p), "create Reshape"))
        return 1;
    if (check(prt_network_add_plugin(net, &x, 1, &s, 1, p, &layer), "add Reshape")) {
        p->vt->runtime->destroy(p);
        return 1;
    }
    return check(prt_network_get_layer_output(net, layer, 0, &y), "layer output") ||
           check(prt_network_set_tensor_name(net, y, "y"), "tensor name") ||
           check(prt_network_mark_output(net, y), "output") ||
           check(prt_builder_config_add_profile(cfg, &profile), "profile") ||
           check(prt_builder_config_set_profile_shape_values(cfg, profile, "s", mn, opt,
                                                             mx, 2),
                 "shape values");
}

int main(int argc, char **argv)
{
    const char *names[5];
    char long_name[256];
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *engine = NULL;
    void *bytes = NULL;
    size_t size = 0;
    int32_t x, mid, y;
    long elems;
    int bad;
    FILE *f;
    int hostile = argc == 4 && strcmp(argv[3], "hostile") == 0;
    int reshape = argc == 4 && strcmp(argv[3], "reshape") == 0;
    if (argc < 3 || argc > 4 || (argc == 4 && !hostile && !reshape) ||
        (elems = strtol(argv[2], NULL, 10)) < 1) {
        fprintf(stderr, "usage: make_plan OUT.plan ELEMS [hostile|reshape]\n");
        return 2;
    }
    memcpy(names, hostile ? hostile_names : plain_names, sizeof names);
    if (hostile) {
        /* 200 ESCs after the name: 800 bytes escaped. */
        size_t n = strlen(names[2]);
        memcpy(long_name, names[2], n);
        memset(long_name + n, 0x1b, 200);
        long_name[n + 200] = '\0';
        names[2] = long_name;
    }
    prt_dims dims = {2, {1, elems}};
    bad = check(prt_network_create(&net), "network") ||
          check(prt_builder_config_create(&cfg), "config");
    if (!bad && reshape)
        bad = make_reshape(net, cfg, elems);
    else if (!bad)
        bad = check(prt_network_add_input(net, names[0], PRT_FLOAT32, &dims, &x),
                    "input") ||
              add_relu(net, x, names[1], &mid) ||
              check(prt_network_set_tensor_name(net, mid, names[3]), "tensor name") ||
              add_relu(net, mid, names[2], &y) ||
              check(prt_network_set_tensor_name(net, y, names[4]), "tensor name") ||
              check(prt_network_mark_output(net, y), "output");
    bad = bad || check(prt_engine_build(net, cfg, NULL, &engine), "build") ||
          check(prt_engine_serialize(engine, &bytes, &size), "serialize");
    if (!bad) {
        f = fopen(argv[1], "wb");
        bad = !f || fwrite(bytes, 1, size, f) != size;
        if (f && fclose(f) != 0)
            bad = 1;
        if (bad)
            fprintf(stderr, "make_plan: cannot write %s\n", argv[1]);
    }
    prt_free(bytes);
    prt_engine_destroy(engine);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return bad;
}
