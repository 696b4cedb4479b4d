/*
 * What the CUDA tests share (linked into each as prt_cuda_testutil):
 * CUDA_OK, a check of a CUDA runtime call, and the boilerplate of the
 * small one-input, one-output plugins that the kernel-layer, tuning and
 * capture tests define, so that each test's file holds only what its
 * plugin does differently (its name, tactics, kernels, enqueue).
 */
#ifndef PLUGRT_TESTS_CUDA_TESTUTIL_H
#define PLUGRT_TESTS_CUDA_TESTUTIL_H

#include <cuda_runtime_api.h>

#include "op_case.h"
#include "testutil.h"

/* 1 if e is cudaSuccess; else a failure (file, line, the call, the
 * error's name and text) and 0. Counts as a check. */
int tcu_ok(cudaError_t e, const char *what, const char *file, int line);
#define CUDA_OK(call) tcu_ok((call), #call, __FILE__, __LINE__)

/* A test plugin: the base and the test's variant of it (which tactics,
 * which code, ...). tcu_clone copies it; tcu_destroy frees it. */
typedef struct tcu_plugin {
    prt_plugin base;
    int32_t kind;
} tcu_plugin;

/* prt_plugin_core: version "1", namespace "test", CUDA only. */
const char *tcu_version(const prt_plugin *p);
const char *tcu_namespace(const prt_plugin *p);
uint32_t tcu_cuda_only(const prt_plugin *p);

/* prt_plugin_build: one output of the input's dtype and dims; formats:
 * float32, linear, and 1-D for tcu_supports_f32_1d. */
int32_t tcu_one_output(const prt_plugin *p);
prt_status tcu_dtype_of_input(prt_plugin *p, int32_t *out, int32_t nb_out,
                              const int32_t *in, int32_t nb_in);
prt_status tcu_shape_of_input(prt_plugin *p, const prt_dim_exprs *in, int32_t nb_in,
                              const prt_dim_exprs *si, int32_t nb_si, prt_dim_exprs *out,
                              int32_t nb_out, prt_expr_builder *eb);
int32_t tcu_supports_f32_1d(prt_plugin *p, int32_t pos, const prt_dynamic_tensor_desc *d,
                            int32_t nb_in, int32_t nb_out);

/* prt_plugin_runtime for a tcu_plugin: clone (attach clones, resources
 * unused), no fields, destroy. */
prt_plugin *tcu_clone(const prt_plugin *p);
prt_plugin *tcu_attach(prt_plugin *p, prt_plugin_resources *r);
const prt_field_collection *tcu_no_fields(prt_plugin *p);
void tcu_destroy(prt_plugin *p);

/* A network x -> p -> y: input "x", float32 of dims d, the plugin layer
 * (named `layer`; NULL: its default name), output "y". The network owns p
 * from the call on: p is destroyed when the network cannot take it. */
prt_status tcu_plugin_network(prt_plugin *p, const prt_dims *d, const char *layer,
                              prt_network **out);

/* An engine for CUDA of a new tcu_plugin (vt, kind) over a 1-D "x" of
 * dynamic size: one profile, 1 to max elements, tuned for opt; with
 * `autotune`, timing cache file `cache` (NULL: none). */
prt_status tcu_build_1d(const prt_plugin_vtable *vt, int32_t kind, int64_t opt,
                        int64_t max, int autotune, const char *cache, prt_engine **out);

/* ---- 8-bit products (test_cuda_lt, test_cuda_qconv) ---- */

/* A tensor of `dtype` and dims d, each byte uniform over 0..255 from r. */
ot_tensor tcu_q_bytes(tu_rng *r, int32_t dtype, prt_dims d);

/* float32 scales uniform in [lo, hi]: n of them, or a scalar when n is 0. */
ot_tensor tcu_q_scales(tu_rng *r, int64_t n, float lo, float hi);

/* Builds c for the CPU and for CUDA and runs the CUDA engine twice: as it
 * chooses, then with PRT_CUDA_QGEMM=kernel (plugrt's plain integer
 * kernels); both must give the CPU's bytes. `runs` counts the runs of the
 * fast path named `path` (opc_qmm_lt_runs, opc_qconv_mma_runs): it must
 * grow during the first CUDA run when `expect`, else stay. Failures are
 * printed under `what` and counted. */
void tcu_q_compare(const oc_case *c, const char *what, int64_t (*runs)(void), int expect,
                   const char *path);

#endif /* PLUGRT_TESTS_CUDA_TESTUTIL_H */
