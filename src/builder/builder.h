/* Builder internals shared by its files (config.c, build.c, formats.c,
 * assemble.c, plan.c, tune.c, plugin_report.c). */
#ifndef PLUGRT_BUILDER_H
#define PLUGRT_BUILDER_H

#include "base/base.h"
#include "base/plugin_label.h"
#include "device/device.h"
#include "engine/engine_impl.h"
#include "expr/expr.h"
#include "kernel/kernel.h"
#include "network/network.h"

typedef struct cfg_entry {
    char *input; /* input name */
    int32_t has_dims, has_values;
    prt_dims min, opt, max;    /* dims, when has_dims */
    prt_dims vmin, vopt, vmax; /* shape-input values, when has_values */
} cfg_entry;

typedef struct cfg_profile {
    int32_t nb_entries;
    cfg_entry *entries;
} cfg_profile;

struct prt_builder_config {
    int32_t device;
    int64_t workspace_limit;
    int32_t autotune;
    int32_t nb_profiles;
    cfg_profile *profiles;
    char *timing_cache;      /* file path, or NULL */
    int32_t threads;         /* for timing runs; 0: base_cpu_count() */
    int32_t blocked_formats; /* 1 (default): CHW8 inside CPU engines */
    int32_t embed_plugins;   /* 1: the engine carries its plugin libraries */
    uint32_t precision;      /* PRT_PRECISION_* */
    int32_t cpu_fallback;    /* 1: layers with no kernel on the target run on the CPU */
};

/* Arena alignment: every arena tensor starts on this boundary (enough for
 * any vector load on CPU and GPU); the engine validates it and device
 * allocations are aligned as much. */
#define PLAN_ALIGN ENG_ARENA_ALIGN
_Static_assert(ENG_ARENA_ALIGN == DEV_ALIGN,
               "the arena and device allocations align alike");

/* One buffer to place: tensors that share memory (in-place aliases) are
 * merged into one item by the caller. */
typedef struct plan_item {
    int64_t bytes;
    int32_t first;  /* first layer index that writes it */
    int32_t last;   /* last layer index that reads it */
    int64_t offset; /* result */
} plan_item;

/* Places items in one arena so that items whose [first, last] intervals
 * intersect never overlap in memory. Greedy: largest first, lowest fitting
 * offset. Returns the arena size or -1 on overflow/out of memory. */
int64_t plan_arena(plan_item *items, int32_t n);

/* Timing and cross-checking of a layer's candidates (tune.c). */
typedef struct tune_candidate {
    int32_t tactic;
    const prt_dynamic_tensor_desc *descs; /* nb_in + nb_out, chosen formats */
} tune_candidate;

/* Runs `plugin` on `dev` with each candidate on random inputs at the opt shapes given
 * in descs (output dims whose bit is set in out_dd[o], which depend on data,
 * at descs' max), checks each candidate's
 * outputs against candidate 0 (the reference: first combination, tactic 0),
 * and returns the index of the fastest one that agrees in *best, and its
 * median time in ms in *best_ms (-1 when none was timed; best_ms may be
 * NULL). Candidates that fail or disagree are logged and skipped.
 * `precision` holds the engine's PRT_PRECISION_* flags: with TF32 allowed,
 * float32 outputs agree within float16's tolerance (TF32 keeps float16's
 * 10-bit mantissa in its products). */
prt_status tune_layer(const dev_ops *dev, prt_plugin *plugin, const char *layer_name,
                      int32_t nb_in, int32_t nb_out, const tune_candidate *cands,
                      int32_t nb_cands, int64_t workspace, const uint32_t *out_dd,
                      uint32_t precision, int32_t *best, double *best_ms);

/* ---- the timing cache (timing_cache.c) ------------------------------------ */

typedef struct tc_entry {
    char *key;
    int32_t tactic;
    int32_t nb_formats;
    int32_t formats[128];
} tc_entry;

/* Code NVRTC compiled from a kernel's source (kernel_nvrtc_compile_cached). */
typedef struct tc_code {
    char *key;
    eng_kernel_code cubin, ptx; /* ptx.size 0 when none */
} tc_code;

typedef struct tc_cache {
    int32_t nb, cap;
    tc_entry *entries;
    int32_t nb_code, cap_code;
    tc_code *code;
    int dirty; /* changed since loaded */
} tc_cache;

/* Reads a cache file; a missing file is an empty cache, a damaged one
 * PRT_ERR_MALFORMED naming it. */
prt_status tc_load(tc_cache *c, const char *path);
/* Writes it (to path.tmp, then renamed over path). */
prt_status tc_save(const tc_cache *c, const char *path);
void tc_free(tc_cache *c);
const tc_entry *tc_find(const tc_cache *c, const char *key);
prt_status tc_put(tc_cache *c, const char *key, int32_t tactic, int32_t n,
                  const int32_t *formats);
/* The cache as a store of compiled kernel source (kernel.h), borrowing c. */
kernel_code_cache tc_code_cache(tc_cache *c);

/* ---- the build in progress (build.c, formats.c, assemble.c) -------------- */

typedef struct bld_tensor {
    int32_t dtype;
    int32_t format;
    prt_dim_exprs dims;
    int32_t size_id;  /* >= 0 for a size tensor */
    int32_t last_use; /* last consuming layer, or -1 */
    int32_t root;     /* tensor whose memory this one uses (aliasing) */
    /* Shape tensors: the values, row-major, as expressions; nb_dims is the
     * element count, -1 when the values are not known at build time. */
    prt_dim_exprs values;
} bld_tensor;

typedef struct bld_layer {
    prt_dynamic_tensor_desc *descs; /* nb_in + nb_out, profile 0, chosen */
    int32_t tactic;
    int64_t workspace;
    int32_t *alias_input;
    uint8_t *alias_copy;
    int32_t host_dims;         /* the runtime waits for sizes before it (eng_layer) */
    int32_t device;            /* where it runs: the target, or the CPU (fallback) */
    struct eng_kernel *kernel; /* what get_kernel gave for the tactic, or NULL */
} bld_layer;

typedef struct bld {
    const prt_network *net;
    const prt_builder_config *cfg;
    const prt_registry *reg;
    expr_pool *pool;
    bld_tensor *t;
    bld_layer *l;
    int32_t nb_profiles;
    prt_dims *pmin, *popt, *pmax;    /* [profile * nb_inputs + input] */
    prt_dims *pvmin, *pvopt, *pvmax; /* shape-input values, same indexing */
    int32_t nb_nodes;
    int64_t *lo, *opt, *hi; /* [profile * nb_nodes + node] */
    uint8_t *dd;            /* [node]: depends on a size tensor's value */
    const dev_ops *dev;     /* the target device, for tuning and the engine */
    dev_info dev_info;      /* what it is, for timing-cache keys */
    tc_cache cache;         /* loaded when the config names a timing cache */
} bld;

/* CPU fallback (prt_builder_config_set_cpu_fallback; formats.c): whether a
 * layer whose plugin lists `devs` (prt_plugin_core.devices) and not the
 * target may run on the CPU instead; and, for the error when it may not,
 * the suggestion to allow it ("" when that would not help). */
int bld_can_fall_back(const bld *b, uint32_t devs);
const char *bld_fallback_hint(const bld *b, uint32_t devs);

/* The plugin's name for messages, "ns::name": bld_plugin_label(p).s
 * (base_plugin_label) (plugin_report.c). */
base_label bld_plugin_label(const prt_plugin *p);
/* Wraps a plugin's failure with the layer; keeps the plugin's message
 * (plugin_report.c). */
prt_status bld_plugin_fail(const net_layer *l, prt_status st, const char *what);

/* The kernel a layer's plugin gives for its chosen tactic on a CUDA target
 * (plugin.h, get_kernel), in bl->kernel; nothing for other targets or
 * plugins without one. Build errors name the layer (kernel_build.c). */
prt_status bld_layer_kernel(bld *b, int32_t li);
/* The kernel layer li's plugin gives for `tactic` with `descs` (nb_in +
 * nb_out), in *out (caller frees: kernel_free, base_free), or *out NULL
 * when the target is not CUDA, the plugin has no get_kernel, or the tactic
 * has none (kernel_build.c). */
prt_status bld_kernel_for(bld *b, int32_t li, const prt_dynamic_tensor_desc *descs,
                          int32_t tactic, eng_kernel **out);
/* For autotuning a CUDA target: a plugin that forwards to layer li's, except
 * that a tactic with a kernel (bld_kernel_for) runs as that kernel
 * (kernel_runner_create), so the tuner times what the engine would run.
 * *out is l's own plugin (nothing to destroy) when it has no get_kernel or
 * the target is not CUDA (kernel_tune.c). */
prt_status bld_tune_plugin(bld *b, int32_t li, prt_plugin **out);
void bld_tune_plugin_destroy(bld *b, int32_t li, prt_plugin *p);

/* 1 for a tensor outside the arena: an input, an output (user memory) or a
 * constant of the engine. Phase 4 keeps such tensors LINEAR, phase 5 keeps
 * them out of aliasing and the arena plan. */
static inline int bld_is_io(const prt_network *net, int32_t id)
{
    return net->tensors[id].input_index >= 0 || net->tensors[id].is_output ||
           net->tensors[id].const_bytes >= 0;
}
/* The build-time descriptor of tensor `id` in profile p: its dtype,
 * format and quantization so far, dims that are constants (-1 for the
 * rest) and every dim's bounds (formats.c). */
void bld_desc(const bld *b, int32_t id, int32_t p, prt_dynamic_tensor_desc *out);
/* Phase 3a, once dtypes, shapes and values are known: built-in layers whose
 * one output the build knows — values that are all numbers (a Shape ->
 * Gather -> Div chain of static dims), or an output evaluated on the CPU
 * from constant inputs — removed, their outputs constants (constfold.c).
 * *out is NULL when there is none; otherwise the network to build instead,
 * freed with bld_constfold_free. */
prt_status bld_constfold(const bld *b, prt_network **out);
void bld_constfold_free(prt_network *net);
/* prt_engine_build without phases 3a-3c (no folds, no precision pass):
 * what phase 3a builds the one-layer engines it evaluates with (build.c). */
prt_status bld_build_plain(const prt_network *net, const prt_builder_config *cfg,
                           const prt_registry *reg, prt_engine **out);
/* Phase 3b, once dtypes and bounds are known: DequantizeLinear layers that
 * fold into the plugin they feed, QuantizeLinear layers into the plugin
 * before them (fold.c). *out is NULL when none does; otherwise the network
 * to build instead (the folded layers gone, their integer tensors with the
 * quantization), freed with bld_fold_free. Logs every fold and every DQ or
 * Q left as a layer. */
prt_status bld_fold(const bld *b, prt_network **out);
void bld_fold_free(prt_network *net);
/* Fills n (zeroed; freed with bld_fold_free, also after a failure) with the
 * layers and tensors of net whose entry in lmap / tmap is not -1, at those
 * new ids: tensors copied (quantization deep-copied, producers renumbered),
 * layers with their tensor ids renumbered; names, constants' data and
 * plugins borrowed from net (fold.c). */
prt_status bld_net_subset(const prt_network *net, const int32_t *lmap, int32_t nb_layers,
                          const int32_t *tmap, int32_t nb_tensors, prt_network *n);
/* Phase 3c, after the fold, with PRT_PRECISION_FP16/BF16 in the config:
 * the layers that run in 16 bits (precision.c). *out is NULL when none
 * does; otherwise the network to build instead (those layers' float32
 * tensors in 16 bits, Cast layers at the boundaries, float32 constants
 * they read converted), freed with bld_precision_free. Logs the count and
 * every layer kept in float32 with the reason. */
prt_status bld_precision(const bld *b, prt_network **out);
void bld_precision_free(prt_network *net);
/* Phase 4, first: which tensors inside a CPU engine take the blocked
 * format CHW8 (where the producer and every consumer accept it), the rest
 * LINEAR (formats.c). */
prt_status bld_plan_formats(bld *b);
/* Phase 4 for one layer: formats, configure, workspace, tactics (formats.c). */
prt_status bld_layer_formats(bld *b, int32_t li);
/* Phase 4, last: which layers need true dims on the host (formats.c). */
prt_status bld_host_dims(bld *b);
/* Phase 5: in-place aliasing, then the engine (assemble.c). */
prt_status bld_alias(bld *b);
prt_status bld_assemble(bld *b, prt_engine **out);

#endif /* PLUGRT_BUILDER_H */
