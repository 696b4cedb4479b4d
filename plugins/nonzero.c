/*
 * NonZeroPlugin (namespace "", version "1"): the indices of the non-zero
 * elements of a 2-D tensor, as TensorRT's NonZero sample plugin.
 *
 * Input 0: float32 or float16, shape R x C (exactly rank 2; any other rank
 * fails get_output_shapes with a message naming the rank).
 * Output 0: int32 indices, K x 2 (rowOrder != 0) or 2 x K (rowOrder == 0).
 * Output 1: K, a 0-D int64 size tensor, declared with
 *     opt         = CEIL_DIV(R * C, 2)   (half dense; CEIL so a 1 x 1 input
 *                                         tunes for 1, not 0)
 *     upper_bound = R * C.
 *
 * Indices are (row, col) pairs in row-major order of the input, so the
 * result is deterministic. At enqueue output 0's descriptor holds the upper
 * bound; the plugin writes densely with the true K:
 *     row order:    [r0, c0, r1, c1, ..., r(K-1), c(K-1)]     (K x 2)
 *     column order: [r0, ..., r(K-1), c0, ..., c(K-1)]         (2 x K)
 * and then K into output 1.
 *
 * Zero: a float32 x is non-zero when x != 0 (so -0 is zero and NaN is
 * non-zero); a float16 is non-zero when its bits other than the sign are not
 * all zero (the same rule).
 *
 * Fields: rowOrder (int32, default 1; any non-zero value means row order,
 * serialized as 0 or 1); backend (char): "nvrtc" makes the layer a kernel
 * layer on CUDA (nonzero_nvrtc.h: source the builder compiles with NVRTC and
 * the engine holds, so it runs with no plugin library), serialized; any
 * other value ("", "cuda", or TensorRT's sample's Python backends) is the
 * compiled kernels below, as before, and is not serialized.
 *
 * CUDA (nonzero_cuda.cu): K is written on the device and never read back.
 * Tactics (cuda_launch.h): 0 picks by size; 1 one block; 2 count, scan,
 * write; 3 one pass with a decoupled look-back (column order stages the
 * column half until K is known); 4 the same with tiles of twice the size;
 * 6 two kernels, a count that writes the input's bitmap (one bit per
 * element) and a write that reads those bits and follows the non-zeros.
 * Tactic 5 (the same with the bits as loaded) is retired: no longer listed,
 * an engine that recorded it runs 6. The workspace holds the multi-block
 * plans' per-tile state and the bits, sized for the profile's largest
 * input. On the CPU every tactic runs the same loop.
 */
#include "common.h"
#include "nonzero_nvrtc.h"

#include <string.h>

typedef struct nonzero {
    plg_object obj;
    int32_t row_order; /* 1: K x 2, 0: 2 x K */
    int32_t nvrtc;     /* backend "nvrtc": a kernel layer on CUDA */
    int32_t tactic;
    prt_field ser[2];
    /* What get_kernel's description points into, which the builder reads
     * until get_kernel returns; made anew by each call, so a clone's copy
     * is never used. */
    plg_nz_nvrtc_desc kernel;
} nonzero;

static const char nz_nvrtc_name[] = "nvrtc";

/* The tactics (cuda_launch.h), AUTO first: a build without autotuning takes
 * the first listed (plugin.h). Only the CUDA kernels tell them apart, so a
 * CPU-only build lists none, and neither does the NVRTC backend, whose one
 * kernel serves tactic 0. Returns the count. */
static int32_t nz_tactic_list(const nonzero *z, const int32_t **list)
{
#ifdef PRT_PLUGINS_CUDA
    static const int32_t all[] = {
        PLG_NZ_AUTO,     PLG_NZ_ONE_BLOCK,     PLG_NZ_COUNT_SCAN_WRITE,
        PLG_NZ_ONE_PASS, PLG_NZ_ONE_PASS_WIDE, PLG_NZ_BITMAP};
    if (z->nvrtc) {
        *list = NULL;
        return 0;
    }
    *list = all;
    return (int32_t)(sizeof all / sizeof all[0]);
#else
    (void)z;
    *list = NULL;
    return 0;
#endif
}

static nonzero *nz(prt_plugin *p)
{
    return (nonzero *)p;
}

/* Indices are int32: every row and column index must fit. */
#define NZ_MAX_DIM ((int64_t)INT32_MAX + 1)

/* One input (x), two outputs (indices, count). */
static prt_status nz_check_io(const nonzero *z, int32_t nb_in, int32_t nb_out)
{
    return plg_check_io(&z->obj, nb_in, nb_out, 1, 2);
}

static prt_status nz_check_rank(const nonzero *z, int32_t rank)
{
    if (rank != 2)
        return plg_fail(&z->obj, PRT_ERR_SHAPE,
                        "input has rank %d; NonZeroPlugin takes a 2-D input "
                        "(rows x cols)",
                        (int)rank);
    return PRT_OK;
}

/* ---- build --------------------------------------------------------------- */

static int32_t nz_nb_outputs(const prt_plugin *self)
{
    (void)self;
    return 2;
}

static prt_status nz_get_output_dtypes(prt_plugin *self, int32_t *out_types,
                                       int32_t nb_outputs, const int32_t *in_types,
                                       int32_t nb_inputs)
{
    prt_status st = nz_check_io(nz(self), nb_inputs, nb_outputs);
    if (st == PRT_OK)
        st = plg_check_float_input(&nz(self)->obj, in_types[0]);
    if (st != PRT_OK)
        return st;
    out_types[0] = PRT_INT32;
    out_types[1] = PRT_INT64;
    return PRT_OK;
}

static prt_status nz_get_output_shapes(prt_plugin *self, const prt_dim_exprs *inputs,
                                       int32_t nb_inputs,
                                       const prt_dim_exprs *shape_inputs,
                                       int32_t nb_shape_inputs, prt_dim_exprs *outputs,
                                       int32_t nb_outputs, prt_expr_builder *exprs)
{
    nonzero *z = nz(self);
    const prt_expr *upper, *opt, *k, *two;
    prt_status st = nz_check_io(z, nb_inputs, nb_outputs);
    (void)shape_inputs, (void)nb_shape_inputs;
    if (st == PRT_OK)
        st = nz_check_rank(z, inputs[0].nb_dims);
    if (st != PRT_OK)
        return st;
    if (!PLG_HAS(exprs, prt_expr_builder, declare_size_tensor))
        return plg_fail(&z->obj, PRT_ERR_VERSION,
                        "the host's expression builder lacks "
                        "declare_size_tensor");
    two = exprs->constant(exprs, 2);
    upper = exprs->operation(exprs, PRT_DIM_PROD, inputs[0].d[0], inputs[0].d[1]);
    opt = exprs->operation(exprs, PRT_DIM_CEIL_DIV, upper, two);
    k = exprs->declare_size_tensor(exprs, 1, opt, upper);
    if (!k)
        return plg_fail(&z->obj, PRT_ERR_PLUGIN,
                        "the expression builder failed to declare the size "
                        "tensor (output 1)");
    outputs[0].nb_dims = 2;
    outputs[0].d[0] = z->row_order ? k : two;
    outputs[0].d[1] = z->row_order ? two : k;
    outputs[1].nb_dims = 0;
    return PRT_OK;
}

static int32_t nz_supports(prt_plugin *self, int32_t pos,
                           const prt_dynamic_tensor_desc *in_out, int32_t nb_inputs,
                           int32_t nb_outputs)
{
    const prt_tensor_desc *d = plg_linear_desc(pos, in_out, nb_inputs, nb_outputs, 1, 2);
    (void)self;
    if (!d)
        return 0;
    if (pos == 0)
        return plg_float_dtype_ok(d->dtype);
    return d->dtype == (pos == 1 ? PRT_INT32 : PRT_INT64);
}

static prt_status nz_check_out_dtypes(const nonzero *z, int32_t idx_dtype,
                                      int32_t count_dtype)
{
    if (idx_dtype != PRT_INT32 || count_dtype != PRT_INT64)
        return plg_fail(&z->obj, PRT_ERR_INVALID_ARGUMENT,
                        "outputs are %s and %s; expected int32 indices and an "
                        "int64 count",
                        plg_dtype_name(idx_dtype), plg_dtype_name(count_dtype));
    return PRT_OK;
}

static prt_status nz_configure(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                               int32_t nb_in, const prt_dynamic_tensor_desc *out,
                               int32_t nb_out)
{
    nonzero *z = nz(self);
    prt_status st = nz_check_io(z, nb_in, nb_out);
    if (st == PRT_OK)
        st = plg_check_float_input(&z->obj, in[0].desc.dtype);
    if (st == PRT_OK)
        st = nz_check_out_dtypes(z, out[0].desc.dtype, out[1].desc.dtype);
    if (st == PRT_OK)
        st = nz_check_rank(z, in[0].desc.dims.nb_dims);
    if (st != PRT_OK)
        return st;
    /* With the profile's largest shape known, refuse indices int32 cannot
     * hold now rather than at run time. */
    if (in[0].max.nb_dims == 2 &&
        (in[0].max.d[0] > NZ_MAX_DIM || in[0].max.d[1] > NZ_MAX_DIM)) {
        char a[96];
        return plg_fail(&z->obj, PRT_ERR_UNSUPPORTED,
                        "input may be as large as %s; int32 indices hold at "
                        "most %lld rows and columns",
                        plg_dims_str(&in[0].max, a, sizeof a), (long long)NZ_MAX_DIM);
    }
    return PRT_OK;
}

static prt_status nz_get_workspace_size(prt_plugin *self,
                                        const prt_dynamic_tensor_desc *in, int32_t nb_in,
                                        const prt_dynamic_tensor_desc *out,
                                        int32_t nb_out, int64_t *out_bytes)
{
    /* The multi-block plans' tile state, for the largest input. */
    int64_t vol = nb_in == 1 && in[0].max.nb_dims == 2 ? plg_volume(&in[0].max) : 0;
    (void)self, (void)out, (void)nb_out;
#ifdef PRT_PLUGINS_CUDA
    *out_bytes = vol > 0 && plg_sizes_for_cuda(self) ? plg_nz_workspace(vol) : 0;
#else
    (void)vol;
    *out_bytes = 0; /* the CPU needs none */
#endif
    /* The kernel layer's counts and offsets, on a CUDA target; no less than
     * the compiled kernels' need, so enqueue (which runs them) stays right
     * with the same workspace. */
    if (nz(self)->nvrtc && nz(self)->obj.target == PRT_DEVICE_CUDA &&
        plg_nz_nvrtc_workspace(vol) > *out_bytes)
        *out_bytes = plg_nz_nvrtc_workspace(vol);
    return PRT_OK;
}

static prt_status nz_get_valid_tactics(prt_plugin *self, int32_t *tactics,
                                       int32_t capacity, int32_t *out_count)
{
    const int32_t *list;
    int32_t n = nz_tactic_list(nz(self), &list);
    return plg_list_tactics(list, n, tactics, capacity, out_count);
}

/* The NVRTC backend's kernel layer (nonzero_nvrtc.h), for any tactic: it
 * lists only 0. The default backend has none: enqueue runs. */
static prt_status nz_get_kernel(prt_plugin *self, int32_t tactic,
                                const prt_dynamic_tensor_desc *in, int32_t nb_in,
                                const prt_dynamic_tensor_desc *out, int32_t nb_out,
                                const prt_dim_exprs *in_dims,
                                const prt_dim_exprs *out_dims, prt_expr_builder *exprs,
                                prt_kernel_desc *kernel)
{
    nonzero *z = nz(self);
    prt_status st;
    (void)tactic, (void)out_dims;
    if (!z->nvrtc)
        return PRT_ERR_UNSUPPORTED;
    st = nz_check_io(z, nb_in, nb_out);
    if (st == PRT_OK)
        st = nz_check_out_dtypes(z, out[0].desc.dtype, out[1].desc.dtype);
    if (st != PRT_OK)
        return st;
    return plg_nz_nvrtc_kernel(&z->obj, in[0].desc.dtype, z->row_order, in_dims, exprs,
                               &z->kernel, kernel);
}

static const prt_plugin_build nz_build = {
    sizeof(prt_plugin_build),
    PRT_PLUGIN_ABI_VERSION,
    nz_nb_outputs,
    nz_get_output_dtypes,
    nz_get_output_shapes,
    nz_supports,
    nz_configure,
    nz_get_workspace_size,
    nz_get_valid_tactics,
    plg_no_aliased_input,
    NULL, /* get_output_values: no shape-tensor outputs */
    NULL, /* requires_host_dims: the kernels read dims_device */
    plg_set_target_device,
    NULL, /* capture_safe: its enqueue may be captured into a graph */
    nz_get_kernel,
};

/* ---- runtime ------------------------------------------------------------- */

static prt_status nz_set_tactic(prt_plugin *self, int32_t tactic)
{
    nonzero *z = nz(self);
    const int32_t *list;
    int32_t n = nz_tactic_list(z, &list);
    prt_status st;
#ifdef PRT_PLUGINS_CUDA
    if (tactic == PLG_NZ_MASKS) /* retired; engines that recorded it */
        tactic = PLG_NZ_BITMAP;
#endif
    st = plg_check_tactic(&z->obj, tactic, list, n);
    if (st == PRT_OK)
        z->tactic = tactic;
    return st;
}

static prt_status nz_on_shape_change(prt_plugin *self, const prt_tensor_desc *in,
                                     int32_t nb_in, const prt_tensor_desc *out,
                                     int32_t nb_out)
{
    nonzero *z = nz(self);
    prt_status st = nz_check_io(z, nb_in, nb_out);
    (void)out;
    if (st == PRT_OK)
        st = nz_check_rank(z, in[0].dims.nb_dims);
    return st;
}

static int64_t nz_count_f32(const float *x, int64_t n)
{
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        k += x[i] != 0.0f; /* NaN != 0 holds: NaN counts */
    return k;
}

static int64_t nz_count_f16(const uint16_t *x, int64_t n)
{
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        k += (x[i] & 0x7FFFu) != 0;
    return k;
}

/* Writes the indices of the k non-zero elements of x (R x C). */
static void nz_write(const void *x, int32_t dtype, int64_t rows, int64_t cols,
                     int32_t row_order, int64_t k, int32_t *idx)
{
    const float *xf = x;
    const uint16_t *xh = x;
    int64_t i = 0, n = 0;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = 0; c < cols; c++, i++) {
            int nonzero_elem =
                dtype == PRT_FLOAT32 ? xf[i] != 0.0f : (xh[i] & 0x7FFFu) != 0;
            if (!nonzero_elem)
                continue;
            if (row_order) {
                idx[2 * n] = (int32_t)r;
                idx[2 * n + 1] = (int32_t)c;
            } else {
                idx[n] = (int32_t)r;
                idx[k + n] = (int32_t)c;
            }
            n++;
        }
    }
}

#ifdef PRT_PLUGINS_CUDA
/* On the device: K is not known here, so output 0 must hold the worst case
 * (every element non-zero), which its upper bound R x C x 2 does. */
static prt_status nz_enqueue_cuda(nonzero *z, const prt_tensor_desc *in_desc,
                                  const prt_tensor_desc *out_desc,
                                  const void *const *inputs, void *const *outputs,
                                  void *workspace, void *stream, int64_t vol)
{
    plg_nz_launch a;
    int64_t cap = plg_volume(&out_desc[0].dims);
    char a_str[96], b_str[96];
    int err;
    if (out_desc[0].dims.nb_dims != 2 || cap < 0 || cap / 2 < vol)
        return plg_fail(&z->obj, PRT_ERR_SHAPE,
                        "output 0 %s cannot hold the %lld index pairs input "
                        "%s may have",
                        plg_dims_str(&out_desc[0].dims, a_str, sizeof a_str),
                        (long long)vol,
                        plg_dims_str(&in_desc[0].dims, b_str, sizeof b_str));
    if (!outputs[1] || (vol > 0 && (!inputs[0] || !outputs[0])))
        return plg_fail(&z->obj, PRT_ERR_INVALID_ARGUMENT,
                        "enqueue with a NULL tensor pointer");
    memset(&a, 0, sizeof a);
    a.x = inputs[0];
    a.dtype = in_desc[0].dtype;
    a.row_order = z->row_order;
    a.rows = in_desc[0].dims.d[0];
    a.cols = in_desc[0].dims.d[1];
    a.dims_device = in_desc[0].dims_device;
    a.idx = outputs[0];
    a.capacity = cap;
    a.count = outputs[1];
    a.tactic = z->tactic;
    a.workspace = workspace;
    if (!plg_cuda())
        return plg_cuda_unavailable(&z->obj);
    err = plg_cuda()->nonzero(&a, stream);
    return err ? plg_cuda_fail(&z->obj, err, "the NonZero kernels") : PRT_OK;
}
#endif

static prt_status nz_enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                             const prt_tensor_desc *out_desc, const void *const *inputs,
                             void *const *outputs, void *workspace, int32_t device,
                             void *stream)
{
    nonzero *z = nz(self);
    const prt_dims *d = &in_desc[0].dims;
    int64_t rows, cols, vol, cap, k;
    char a[96];
    prt_status st =
        plg_check_enqueue(&z->obj, device, in_desc, out_desc, inputs, outputs);
    (void)workspace, (void)stream;
    if (st == PRT_OK)
        st = plg_check_float_input(&z->obj, in_desc[0].dtype);
    if (st == PRT_OK)
        st = nz_check_out_dtypes(z, out_desc[0].dtype, out_desc[1].dtype);
    if (st == PRT_OK)
        st = nz_check_rank(z, d->nb_dims);
    if (st == PRT_OK)
        st = plg_check_input_volume(&z->obj, d, &vol);
    if (st != PRT_OK)
        return st;
    rows = d->d[0];
    cols = d->d[1];
    if (rows > NZ_MAX_DIM || cols > NZ_MAX_DIM)
        return plg_fail(&z->obj, PRT_ERR_UNSUPPORTED,
                        "input %s: int32 indices hold at most %lld rows and "
                        "columns",
                        plg_dims_str(d, a, sizeof a), (long long)NZ_MAX_DIM);
#ifdef PRT_PLUGINS_CUDA
    if (device == PRT_DEVICE_CUDA)
        return nz_enqueue_cuda(z, in_desc, out_desc, inputs, outputs, workspace, stream,
                               vol);
#endif
    if (!outputs[1] || (vol > 0 && !inputs[0]))
        return plg_fail(&z->obj, PRT_ERR_INVALID_ARGUMENT,
                        "enqueue with a NULL tensor pointer");
    k = vol == 0                          ? 0
        : in_desc[0].dtype == PRT_FLOAT32 ? nz_count_f32(inputs[0], vol)
                                          : nz_count_f16(inputs[0], vol);
    /* out_desc[0] holds the upper bound the memory was sized for. */
    cap = plg_volume(&out_desc[0].dims);
    if (out_desc[0].dims.nb_dims != 2 || cap < 0 || cap / 2 < k)
        return plg_fail(&z->obj, PRT_ERR_SHAPE,
                        "output 0 %s cannot hold %lld index pairs",
                        plg_dims_str(&out_desc[0].dims, a, sizeof a), (long long)k);
    if (k > 0) {
        if (!outputs[0])
            return plg_fail(&z->obj, PRT_ERR_INVALID_ARGUMENT,
                            "enqueue with a NULL tensor pointer");
        nz_write(inputs[0], in_desc[0].dtype, rows, cols, z->row_order, k, outputs[0]);
    }
    memcpy(outputs[1], &k, sizeof k);
    return PRT_OK;
}

static const prt_field_collection *nz_fields(prt_plugin *self)
{
    nonzero *z = nz(self);
    z->ser[0].name = "rowOrder";
    z->ser[0].data = &z->row_order;
    z->ser[0].type = PRT_FIELD_INT32;
    z->ser[0].length = 1;
    z->obj.serialized.nb_fields = 1;
    if (z->nvrtc) { /* the default is left out, as before the field counted */
        z->ser[1].name = "backend";
        z->ser[1].data = nz_nvrtc_name;
        z->ser[1].type = PRT_FIELD_CHAR;
        z->ser[1].length = (int64_t)(sizeof nz_nvrtc_name - 1);
        z->obj.serialized.nb_fields = 2;
    }
    z->obj.serialized.fields = z->ser;
    return &z->obj.serialized;
}

static const prt_plugin_runtime nz_runtime = {
    sizeof(prt_plugin_runtime),
    PRT_PLUGIN_ABI_VERSION,
    nz_set_tactic,
    nz_on_shape_change,
    nz_enqueue,
    plg_attach_to_context,
    nz_fields,
    plg_clone,
    plg_destroy,
};

static const prt_plugin_vtable nz_vt_build = {
    sizeof(prt_plugin_vtable), PRT_PLUGIN_ABI_VERSION, &plg_core, &nz_build, &nz_runtime};
static const prt_plugin_vtable nz_vt_runtime = {
    sizeof(prt_plugin_vtable), PRT_PLUGIN_ABI_VERSION, &plg_core, NULL, &nz_runtime};

/* ---- creator ------------------------------------------------------------- */

static const prt_field_schema nz_schema[] = {
    {"rowOrder", PRT_FIELD_INT32, 1, "1 (default): indices K x 2; 0: indices 2 x K"},
    {"backend", PRT_FIELD_CHAR, -1,
     "\"nvrtc\": a kernel layer on CUDA, compiled at build time and held in the "
     "engine; any other value (\"\", \"cuda\"): the compiled CUDA kernels"},
};

/* *nvrtc = 1 when the backend field says "nvrtc" (trailing NULs, as
 * TensorRT's fields count them, ignored). */
static prt_status nz_backend(const plg_fields *f, int32_t *nvrtc)
{
    const prt_field *b = NULL;
    int64_t n;
    prt_status st = plg_fields_find(f, "backend", &b);
    if (st == PRT_OK && b)
        st = plg_fields_check(f, b, PRT_FIELD_CHAR, 0, -1);
    if (st != PRT_OK || !b)
        return st;
    n = b->length;
    while (n > 0 && ((const char *)b->data)[n - 1] == '\0')
        n--;
    *nvrtc = n == (int64_t)(sizeof nz_nvrtc_name - 1) &&
             memcmp(b->data, nz_nvrtc_name, (size_t)n) == 0;
    return PRT_OK;
}

static prt_status nz_create(const prt_plugin_creator *self, const char *layer_name,
                            const prt_field_collection *fields, int32_t phase,
                            prt_plugin **out)
{
    plg_fields f = {self->name, layer_name ? layer_name : "", fields};
    const prt_plugin_vtable *vt;
    int32_t row_order = 1, nvrtc = 0;
    nonzero *z;
    prt_status st = plg_fields_validate(&f);
    if (st == PRT_OK)
        st = plg_fields_get_i32(&f, "rowOrder", 1, &row_order);
    if (st == PRT_OK)
        st = nz_backend(&f, &nvrtc);
    if (st != PRT_OK)
        return st;
    vt = plg_phase_vtable(self->name, phase, &nz_vt_build, &nz_vt_runtime);
    if (!vt)
        return PRT_ERR_INVALID_ARGUMENT;
    z = (nonzero *)plg_object_create(self, vt, sizeof *z, f.layer);
    if (!z)
        return PRT_ERR_OUT_OF_MEMORY;
    z->row_order = row_order != 0;
    z->nvrtc = nvrtc;
    *out = &z->obj.base;
    return PRT_OK;
}

const prt_plugin_creator plg_nonzero_creator = {
    sizeof(prt_plugin_creator),
    PRT_PLUGIN_ABI_VERSION,
    "NonZeroPlugin",
    "1",
    "",
    (int32_t)(sizeof nz_schema / sizeof nz_schema[0]),
    nz_schema,
    nz_create,
    NULL,
};
