/*
 * An engine's memory: allocating an empty engine, and freeing everything an
 * engine owns, whether the builder made it or the reader parsed it (and
 * however far either got before it failed: the counted arrays say what
 * exists).
 */
#include "engine/engine_impl.h"
#include "kernel/kernel.h"
#include "network/network.h"

prt_engine *engine_alloc(void)
{
    prt_engine *e = base_calloc(1, sizeof(prt_engine));
    if (!e)
        return NULL;
    e->plugin_lock = base_malloc(sizeof *e->plugin_lock);
    if (!e->plugin_lock || pthread_mutex_init(e->plugin_lock, NULL) != 0) {
        base_free(e->plugin_lock);
        base_free(e);
        return NULL;
    }
    return e;
}

void engine_free(prt_engine *e)
{
    if (!e)
        return;
    for (int32_t i = 0; i < e->nb_tensors; i++) {
        base_free(e->tensors[i].name);
        base_quant_free(&e->tensors[i].quant);
    }
    base_free(e->tensors);
    for (int32_t i = 0; i < e->nb_layers; i++) {
        eng_layer *l = &e->layers[i];
        network_destroy_plugin(l->plugin);
        base_free(l->name);
        base_free(l->plugin_namespace);
        base_free(l->plugin_name);
        base_free(l->plugin_version);
        base_free(l->library);
        base_free(l->fields);
        base_free(l->field_blob);
        base_free(l->inputs);
        base_free(l->outputs);
        base_free(l->alias_input);
        base_free(l->fetch);
        base_free(l->push);
        base_free(l->alias_copy);
    }
    base_free(e->layers);
    /* After the layers' plugins: a kernel layer's runner borrows its kernel. */
    for (int32_t i = 0; e->kernels && i < e->nb_kernels; i++)
        kernel_free(&e->kernels[i]);
    base_free(e->kernels);
    /* After the plugins: the libraries hold their code. */
    prt_registry_destroy(e->embedded_reg);
    for (int32_t i = 0; i < e->nb_libraries; i++) {
        base_free(e->libraries[i].name);
        base_free(e->libraries[i].bytes);
    }
    base_free(e->libraries);
    base_free(e->input_tensors);
    base_free(e->output_tensors);
    base_free(e->prof_min);
    base_free(e->prof_opt);
    base_free(e->prof_max);
    base_free(e->prof_vmin);
    base_free(e->prof_vopt);
    base_free(e->prof_vmax);
    if (e->dev && e->weights_dev && e->weights_dev != e->weights)
        e->dev->free(e->weights_dev);
    base_aligned_free(e->weights);
    expr_program_free(&e->exprs);
    pthread_mutex_destroy(e->plugin_lock);
    base_free(e->plugin_lock);
    base_free(e);
}
