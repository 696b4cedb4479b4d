/*
 * Kernel layers at build time (builder.h, bld_layer_kernel): asks a
 * layer's plugin for a kernel at the chosen tactic, with the layer's own
 * dims as the leaves of a fresh expression pool, and keeps the engine's
 * copy of it (kernel_from_desc), its parameters checked against the code.
 */
#include <string.h>

#include "builder/builder.h"
#include "kernel/kernel.h"

prt_status bld_layer_kernel(bld *b, int32_t li)
{
    const net_layer *l = &b->net->layers[li];
    bld_layer *bl = &b->l[li];
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
    prt_status st = PRT_OK;
    if (b->cfg->device != PRT_DEVICE_CUDA || !get_kernel)
        return PRT_OK;
    dims = base_calloc((size_t)n + 1, sizeof *dims);
    ranks = base_calloc((size_t)n + 1, sizeof *ranks);
    pool = expr_pool_create();
    if (!dims || !ranks || !pool) {
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
        goto done;
    }
    /* Leaf (k, d) is dim d of the layer's tensor k: inputs, then outputs. */
    for (int32_t k = 0; k < n && !st; k++) {
        const bld_tensor *t = &b->t[k < nb_in ? l->inputs[k] : l->outputs[k - nb_in]];
        ranks[k] = t->dims.nb_dims;
        dims[k].nb_dims = t->dims.nb_dims;
        for (int32_t d = 0; d < t->dims.nb_dims; d++)
            if (!(dims[k].d[d] = expr_input_dim(pool, k, d)))
                st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    }
    if (st)
        goto done;
    memset(&desc, 0, sizeof desc);
    desc.struct_size = sizeof desc;
    base_clear_error();
    st = get_kernel(l->plugin, bl->tactic, bl->descs, nb_in, bl->descs + nb_in, nb_out,
                    dims, dims + nb_in, expr_pool_builder(pool), &desc);
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
    bl->kernel = base_calloc(1, sizeof *bl->kernel);
    if (!bl->kernel) {
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
        goto done;
    }
    io.nb_in = nb_in;
    io.nb_out = nb_out;
    io.ranks = ranks;
    st = kernel_from_desc(&desc, pool, b->dev_info.cc_major * 10 + b->dev_info.cc_minor,
                          l->name, &io, bl->kernel);
    if (st) {
        base_free(bl->kernel);
        bl->kernel = NULL;
        goto done;
    }
    bl->kernel->layer = li;
    base_log(PRT_SEV_INFO,
             "layer '%s': plugin %s gives a kernel for tactic %d (%d launch%s): "
             "the engine runs it as a kernel layer",
             l->name, bld_plugin_label(l->plugin).s, (int)bl->tactic,
             (int)bl->kernel->nb_launches, bl->kernel->nb_launches == 1 ? "" : "es");
done:
    expr_pool_destroy(pool);
    base_free(dims);
    base_free(ranks);
    return st;
}
