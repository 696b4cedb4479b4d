/* Builder internals shared by its files (config.c, build.c, plan.c,
 * tune.c). */
#ifndef PLUGRT_BUILDER_H
#define PLUGRT_BUILDER_H

#include "base/base.h"
#include "engine/engine_impl.h"
#include "expr/expr.h"
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
};

/* Arena alignment: every arena tensor starts on this boundary (enough for
 * any vector load on CPU and GPU). */
#define PLAN_ALIGN 256

/* One buffer to place: tensors that share memory (in-place aliases) are
 * merged into one item by the caller. */
typedef struct plan_item {
    int64_t bytes;
    int32_t first; /* first layer index that writes it */
    int32_t last;  /* last layer index that reads it */
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

/* Runs `plugin` with each candidate on random inputs at the opt shapes given
 * in descs (output dims whose bit is set in out_dd[o], which depend on data,
 * at descs' max), checks each candidate's
 * outputs against candidate 0 (the reference: first combination, tactic 0),
 * and returns the index of the fastest one that agrees in *best. Candidates
 * that fail or disagree are logged and skipped. */
prt_status tune_layer(prt_plugin *plugin, const char *layer_name, int32_t nb_in,
                      int32_t nb_out, const tune_candidate *cands,
                      int32_t nb_cands, int64_t workspace,
                      const uint32_t *out_dd, int32_t *best);

#endif /* PLUGRT_BUILDER_H */
