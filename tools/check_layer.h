/*
 * One plugin object driven through its build entries the way libplugrt's
 * builder drives a layer (builder/build.c, builder/formats.c): output
 * dtypes, output shapes as expressions of the checker's pool, output
 * values, format negotiation, configure and workspace for a profile. The
 * checks use it to make the plugin objects they test, and discovery uses
 * it to find what a plugin accepts.
 */
#ifndef PLUGRT_TOOLS_CHECK_LAYER_H
#define PLUGRT_TOOLS_CHECK_LAYER_H

#include "check.h"
#include "check_expr.h"

/* What a step ended in. */
enum {
    CHK_OK = 0,
    CHK_REFUSED = 1, /* the plugin said no, with a status: a fact, not a fault */
    CHK_BROKEN = 2   /* the plugin broke its contract; `why` says how */
};

/* How random profiles are drawn. */
typedef struct chk_mode {
    /* Inputs share their trailing dims (CHK_REL_TRAILING) where the
     * signature's relation is CHK_REL_INDEPENDENT; a signature with another
     * relation is always drawn with it. */
    int tied;
    int zero_input; /* >= 0: a dim of this input may be 0 (min 0), else -1 */
} chk_mode;

typedef struct chk_layer {
    chk_ctx *c;
    prt_plugin *p; /* the build-phase object, owned */
    chk_pool *pool;
    chk_sig sig;
    int32_t nb_in, nb_out;
    int32_t out_types[CHK_MAX_OUT];
    prt_dim_exprs in_exprs[CHK_MAX_IN];
    prt_dim_exprs shape_exprs[CHK_MAX_SHAPE]; /* the shape inputs' values */
    prt_dim_exprs out_exprs[CHK_MAX_OUT];
    prt_dim_exprs out_values[CHK_MAX_OUT]; /* nb_dims -1 where not stated */
    int has_values;                        /* some output states values */
    /* Contracts of size tensors and stated values that the open found
     * broken ("" if none): the size-tensors and values checks report them,
     * the runtime checks do not rely on those outputs. */
    char size_problem[CHK_MSG];
    char values_problem[CHK_MSG];
    char alias_problem[CHK_MSG];
    /* The profile configure accepted (after chk_layer_setup). */
    chk_mode mode;
    int32_t zero_dim; /* with mode.zero_input: the dim that may be 0, or -1 */
    /* With the shape inputs' values after the inputs' dims. */
    prt_dims pmin[CHK_MAX_DIMSETS], popt[CHK_MAX_DIMSETS], pmax[CHK_MAX_DIMSETS];
    prt_dynamic_tensor_desc descs[CHK_MAX_IO];
    int64_t workspace;
    int32_t refused_pos;        /* formats: the position refused, -1 if none */
    int32_t alias[CHK_MAX_OUT]; /* get_aliased_input per output (chk_layer_alias) */
    char why[CHK_MSG];          /* why the last step did not end in CHK_OK */
} chk_layer;

/* Creates the plugin and asks its dtypes, shapes and values for `sig`.
 * Input dims and shape-input values are symbols, or the constants of
 * `static_dims` (NULL unless sig->static_dims; the inputs' dims, then the
 * shape inputs' values). */
int chk_layer_open(chk_ctx *c, const chk_sig *sig, const prt_dims *static_dims,
                   chk_layer *L);
void chk_layer_close(chk_layer *L);

/* Draws profiles until one goes through format negotiation and configure
 * (at most `attempts`), opening the layer first when it is not open (and
 * again per attempt for static dims). L is zeroed or open. */
int chk_layer_setup(chk_ctx *c, const chk_sig *sig, chk_rng *r, chk_mode mode,
                    int attempts, chk_layer *L);

/* The build-time descriptors for a profile (inputs then outputs, output
 * bounds by interval arithmetic): CHK_OK, or CHK_BROKEN when an output dim
 * can be negative or cannot be bounded. */
int chk_layer_descs(chk_layer *L, const prt_dims *min, const prt_dims *opt,
                    const prt_dims *max, prt_dynamic_tensor_desc *descs);
/* supports_format_combination over every position in order, as the
 * builder negotiates (the only format is linear): CHK_OK when the whole
 * combination is accepted, else CHK_REFUSED with refused_pos. */
int chk_layer_formats(chk_layer *L, prt_dynamic_tensor_desc *descs);
/* configure + get_workspace_size for descs; sets L->workspace. */
int chk_layer_configure(chk_layer *L, prt_dynamic_tensor_desc *descs);

/* get_aliased_input for every output into L->alias (-1 without the
 * entry): CHK_OK, or CHK_BROKEN when an answer names no input or one of
 * another dtype. */
int chk_layer_alias(chk_layer *L);

/* Concrete input shapes within the accepted profile, and shape-input
 * values after them (CHK_MAX_DIMSETS entries). */
void chk_layer_draw(const chk_layer *L, chk_rng *r, prt_dims *in_dims);
/* 1 if a dim of input `input` may be 0 under the signature (it has dims,
 * and an input spec's range of one of them starts at 0). */
int chk_sig_can_be_empty(const chk_sig *sig, int32_t input);
/* Larger maxima for the workspace check: each drawn dim of `bigger` grows
 * (doubled where dims are tied or constant), the relation kept. */
void chk_layer_grow(const chk_layer *L, chk_rng *r, prt_dims *bigger);
/* What the layer's expressions are evaluated at: the inputs' dims and
 * the shape inputs' values in `dims`, the size tensors' values (NULL: at
 * their upper bounds). */
chk_env chk_layer_env(const chk_layer *L, const prt_dims *dims, const int64_t *sizes);
/* Output dims at concrete input dims, sizes at `sizes` (NULL: at their
 * upper bounds). 0, or -1 with L->why. */
int chk_layer_out_dims(chk_layer *L, const prt_dims *in_dims, const int64_t *sizes,
                       prt_dims *out_dims);

/* 1 if two dims have the same rank and the same dims up to it. */
int chk_dims_equal(const prt_dims *a, const prt_dims *b);

/* "in0 float32 3x4, in1 float32 3x4", then shape inputs' values:
 * "in0 float32 3x4, shape0 (2, 1)". */
char *chk_shape_str(const chk_layer *L, const prt_dims *in_dims, char *buf, size_t cap);
/* What a plan tests: "1 input: in0 float32|float16, rank 1|2|8". */
char *chk_plan_str(const chk_plan *plan, char *buf, size_t cap);
/* "1 input: float32, rank 2" */
char *chk_sig_str(const chk_sig *s, char *buf, size_t cap);

/* Finds what the plugin accepts (inputs, dtypes, ranks, the relation of
 * the inputs' dims) into c->sh->plan, as the builder negotiates: input
 * dtypes position by position through supports_format_combination (which
 * may read only positions <= pos), each list then asked of
 * get_output_dtypes; ranks; then shapes drawn under each relation in turn
 * (independent, trailing, leading, broadcast) until configure accepts a
 * profile. With c->spec the spec is the plan, and a refusal of it is
 * broken. CHK_OK, CHK_REFUSED (nothing found: plan->why quotes the
 * refusal of the candidate that got furthest), or CHK_BROKEN (a contract
 * broken on the way, or the spec refused: why). */
int chk_discover(chk_ctx *c, char *why, size_t cap);

#endif /* PLUGRT_TOOLS_CHECK_LAYER_H */
