/*
 * Running a plugin the way the runtime does (runtime/run.c), with what an
 * engine cannot give: every buffer on its own allocation between guard
 * bytes, outputs poisoned before every run (two patterns, so an element
 * left unwritten shows as the poison of each run), inputs compared with
 * their pristine copy afterwards, and each size tensor's value read
 * against its upper bound.
 *
 * On CUDA every buffer is a device allocation holding the same guard |
 * data | guard block as its host mirror: the mirror is prepared as on the
 * CPU, copied to the device whole, the plugin enqueued on the checker's
 * stream, the device waited for (a kernel's fault is the run's failure),
 * and every block copied back whole, so guards, poison and inputs are
 * checked on what the device holds.
 */
#ifndef PLUGRT_TOOLS_CHECK_RUN_H
#define PLUGRT_TOOLS_CHECK_RUN_H

#include "check_case.h"
#include "check_objects.h"

/* What one run did. */
typedef struct chk_outcome {
    prt_status st;     /* PRT_OK, or the plugin's status */
    char msg[CHK_MSG]; /* the plugin's message on failure */
    /* The device failed around the run (a kernel's fault, a copy): st is
     * PRT_ERR_PLUGIN and msg says what the device reported. A fact about
     * the plugin, never a refusal. */
    int device_failed;
    int64_t sizes[CHK_MAX_OUT]; /* per size id, clamped into [0, bound] */
    prt_dims true_dims[CHK_MAX_OUT];
    int64_t count[CHK_MAX_OUT]; /* elements of the true result (within the buffer) */
    unsigned char *data[CHK_MAX_OUT]; /* the outputs' first count elements, owned */
    /* A size tensor's value outside [0, its bound] ("" if none). */
    char size_bad[CHK_MSG];
    char size_bad_tensor[32];
    /* The first thing written where it must not be ("" if none); a bad
     * size is one of them. */
    char bounds[CHK_MSG];
    char bounds_tensor[32];
    int64_t bounds_element;
} chk_outcome;

/* Runs o on k: guards reset, inputs restored, outputs and workspace
 * poisoned with pattern 1 or 2; with `aliased`, each output that aliases an
 * input is that input's buffer, as at run time. on_shape_change is called
 * when o has not been told these dims. Then enqueue on c->device (with
 * c->gated, behind a busy stream: see check_transfer.c), and the outcome
 * read. Frees what *out held. Returns out->st. */
prt_status chk_run(chk_ctx *c, chk_case *k, chk_obj *o, int poison, int aliased,
                   chk_outcome *out);
void chk_outcome_free(chk_outcome *out);

/* Compares two outcomes of the same case output by output (integers
 * exactly, floats within the tolerances `tol` names, CHK_TOL_SAME or
 * CHK_TOL_DEVICES, where `got` ran on CUDA and `ref` on the CPU): 0 if they
 * agree, else -1 with the first differing output and element and both
 * values in why. */
int chk_outcome_compare(const chk_case *k, const chk_outcome *got, const chk_outcome *ref,
                        int32_t tol, int32_t *out_tensor, int64_t *out_element, char *why,
                        size_t cap);

/* The first element of an output left unwritten by two runs with poison 1
 * and 2, or -1. */
int64_t chk_unwritten(int32_t dtype, const chk_outcome *a, const chk_outcome *b,
                      int32_t output);

/* A case the plugin runs for `sig`: a layer set up (untied dims, then tied
 * when there are several inputs) and shapes drawn until a run succeeds;
 * first holds that run (poison 1, separate buffers). CHK_OK, CHK_REFUSED
 * (nothing ran: L->why) or CHK_BROKEN. L is zeroed first; the caller
 * closes it and frees the case. */
int chk_find_case(chk_ctx *c, const chk_sig *sig, chk_rng *r, int zero_input, int sparse,
                  chk_layer *L, chk_case *k, chk_obj *o, chk_outcome *first);

/* One case that ran, with its reference: the first run of the configured
 * build-phase plugin (as the builder's timing runs it), poison 1, apart. */
typedef struct chk_rcase {
    chk_layer L;
    chk_case k;
    chk_obj o; /* the layer's own plugin */
    chk_outcome ref;
} chk_rcase;

typedef void (*chk_case_fn)(chk_ctx *c, chk_rcase *x, void *user);

/* Calls fn on c->iterations cases of every signature, alternating dense
 * and sparse data, until the check fails; with zero_input >= 0, only for
 * signatures where that input has a dim, which may be 0. Returns how many
 * ran; *refused (may be NULL) counts the cases nothing ran for. Without
 * zero_input, a check where nothing ran at all fails, naming the last
 * refusal. */
int32_t chk_for_cases(chk_ctx *c, int zero_input, chk_case_fn fn, void *user,
                      int32_t *refused);

/* ---- against the reference --------------------------------------------- */

/* A run that must agree with the reference (CHK_TOL_SAME). 1, with the
 * check failed naming `what`, if not. */
int chk_differs(chk_ctx *c, const chk_case *k, int32_t tactic, const chk_outcome *got,
                const chk_outcome *ref, const char *what);
/* A second set of shapes within x's profile, of another size than x's
 * where the profile allows, and its reference from the layer's plugin. 0,
 * or -1 when it did not run (not a failure). */
int chk_other_case(chk_ctx *c, chk_rcase *x, chk_case *k2, chk_outcome *ref2);
/* The elements of a case's inputs and its shape inputs' values, summed:
 * what "another size" means to chk_other_case. */
int64_t chk_case_size(const chk_case *k);

#endif /* PLUGRT_TOOLS_CHECK_RUN_H */
