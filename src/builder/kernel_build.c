/*
 * Kernel layers at build time (builder.h, bld_layer_kernel): asks a
 * layer's plugin for a kernel at a tactic, with the layer's own dims as the
 * leaves of a fresh expression pool, and keeps the engine's copy of it
 * (kernel_from_desc), its parameters checked against the code. CUDA source
 * compiles through the timing cache (kernel_nvrtc_compile_cached).
 */
#include <string.h>

#include "builder/builder.h"
#include "kernel/kernel.h"

prt_status bld_kernel_for(bld *b, int32_t li, const prt_dynamic_tensor_desc *descs,
                          int32_t tactic, eng_kernel **out)
{
    const net_layer *l = &b->net->layers[li];
    prt_status (*get_kernel)(prt_plugin *, int32_t, const prt_dynamic_tensor_desc *,
                             int32_t, const prt_dynamic_tensor_desc *, int32_t,
                             const prt_dim_exprs *, const prt_dim_exprs *,
                             prt_expr_builder *, prt_kernel_desc *) =
        BUILD_ENTRY(l->plugin, get_kernel);
    int32_t nb_in = l->nb_inputs, nb_out = l->nb_outputs, n = nb_in + nb_out;
    prt_dim_exprs *dims = NULL;
    int32_t *ranks = NULL;
    expr_pool *pool = NULL;
    prt_kernel_desc desc;
    kernel_io io;
    kernel_code_cache cache = tc_code_cache(&b->cache);
    eng_kernel *k = NULL;
    prt_status st = PRT_OK;
    *out = NULL;
    if (b->l[li].device != PRT_DEVICE_CUDA || !get_kernel)
        return PRT_OK;
    dims = base_calloc((size_t)n + 1, sizeof *dims);
    ranks = base_calloc((size_t)n + 1, sizeof *ranks);
    pool = expr_pool_create();
    if (!dims || !ranks || !pool) {
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
        goto done;
    }
    /* Leaf (k, d) is dim d of the layer's tensor k: inputs, then outputs. */
    for (int32_t t = 0; t < n && !st; t++) {
        const bld_tensor *bt = &b->t[t < nb_in ? l->inputs[t] : l->outputs[t - nb_in]];
        ranks[t] = bt->dims.nb_dims;
        dims[t].nb_dims = bt->dims.nb_dims;
        for (int32_t d = 0; d < bt->dims.nb_dims; d++)
            if (!(dims[t].d[d] = expr_input_dim(pool, t, d)))
                st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    }
    if (st)
        goto done;
    memset(&desc, 0, sizeof desc);
    desc.struct_size = sizeof desc;
    base_clear_error();
    st = get_kernel(l->plugin, tactic, descs, nb_in, descs + nb_in, nb_out, dims,
                    dims + nb_in, expr_pool_builder(pool), &desc);
    if (st == PRT_ERR_UNSUPPORTED) {
        /* No kernel for this tactic: enqueue runs. */
        base_clear_error();
        st = PRT_OK;
        goto done;
    }
    if (st) {
        st = bld_plugin_fail(l, st, "get_kernel failed");
        goto done;
    }
    k = base_calloc(1, sizeof *k);
    if (!k) {
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
        goto done;
    }
    io.nb_in = nb_in;
    io.nb_out = nb_out;
    io.ranks = ranks;
    /* Source compiles through the timing cache: saved with it when the
     * config names one, and reused within this build either way (tuning
     * compiles each tactic's kernel, the chosen one is asked again). */
    st = kernel_from_desc_cached(&desc, pool,
                                 b->dev_info.cc_major * 10 + b->dev_info.cc_minor,
                                 l->name, &io, &cache, k);
    if (st) {
        base_free(k);
        goto done;
    }
    k->layer = li;
    *out = k;
done:
    expr_pool_destroy(pool);
    base_free(dims);
    base_free(ranks);
    return st;
}

prt_status bld_layer_kernel(bld *b, int32_t li)
{
    const net_layer *l = &b->net->layers[li];
    bld_layer *bl = &b->l[li];
    prt_status st = bld_kernel_for(b, li, bl->descs, bl->tactic, &bl->kernel);
    if (st || !bl->kernel)
        return st;
    base_log(PRT_SEV_INFO,
             "layer '%s': plugin %s gives a kernel for tactic %d (%d launch%s): "
             "the engine runs it as a kernel layer",
             l->name, bld_plugin_label(l->plugin).s, (int)bl->tactic,
             (int)bl->kernel->nb_launches, bl->kernel->nb_launches == 1 ? "" : "es");
    return PRT_OK;
}
