/*
 * The workspace a built-in op's runs are given (internal to libplugrt).
 *
 * plugin.h's enqueue gets a workspace pointer and no size: a plugin trusts
 * the host to give it what get_workspace_size asked for. An engine file
 * says how much each layer gets (its claim), and a file is untrusted, so
 * plugrt's own ops are told that claim and check their need at each run's
 * shapes against it: a run that needs more fails, naming both, instead of
 * writing past the block. The loader has already refused a claim that
 * differs from the op's need at the profiles' largest shapes
 * (engine_check_layers); this is the same rule where the writes happen.
 */
#ifndef PLUGRT_OPS_OP_WORKSPACE_H
#define PLUGRT_OPS_OP_WORKSPACE_H

#include "base/base.h"

/* Tells p, a built-in op's object, that its runs get `bytes` of workspace;
 * its clones (attach_to_context) inherit it. An object never told gets
 * none: a run that needs workspace then fails. Does nothing for another
 * plugin. Called by the engine on its layers' plugins (the builder's and
 * the loader's, with the layer's claim) and by the builder's tuner on the
 * network plugin (with what it allocated), while nothing else uses p. */
void op_bind_workspace(prt_plugin *p, int64_t bytes);

/* What tactic `tactic` of p (a built-in op's object) is on `device`
 * (static storage: "cuDNN IMPLICIT_PRECOMP_GEMM"), or NULL for another
 * plugin, a device whose kernel has no tactics (the CPU), or an unknown
 * tactic: for the build log and prt_layer_info.tactic_name. */
const char *op_tactic_name(const prt_plugin *p, int32_t device, int32_t tactic);

#endif /* PLUGRT_OPS_OP_WORKSPACE_H */
