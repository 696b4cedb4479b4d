/*
 * The signal-processing built-ins (ONNX opset 17): the window functions
 * HannWindow, HammingWindow and BlackmanWindow, MelWeightMatrix
 * (signal_window.c), DFT (dft.c) and STFT (stft.c), and the transform
 * they share (signal_fft.c). Internal to libplugrt; builtins.c lists the
 * creators, src/ops/cuda/signal_cuda.c reads the fields through the
 * functions below.
 *
 * Sizes that are values (a window's size, DFT's dft_length, STFT's
 * frame_step and frame_length, MelWeightMatrix's num_mel_bins and
 * dft_length) are shape inputs that are also data inputs: their values
 * are expressions at build time, so the output dims are, and the kernels
 * read them from the data (on CUDA from device memory, in the kernel).
 */
#ifndef PLUGRT_OPS_OPS_SIGNAL_H
#define PLUGRT_OPS_OPS_SIGNAL_H

#include "base/parallel.h"
#include "ops/op_common.h"

extern const prt_plugin_creator op_hann_window_creator;
extern const prt_plugin_creator op_hamming_window_creator;
extern const prt_plugin_creator op_blackman_window_creator;
extern const prt_plugin_creator op_mel_weight_matrix_creator;
extern const prt_plugin_creator op_dft_creator;
extern const prt_plugin_creator op_stft_creator;

/* ---- windows (signal_window.c) -------------------------------------------- */

/* A window of n points is w[k] = c[0] - c[1] cos(2 pi k / D) +
 * c[2] cos(4 pi k / D), D = n when periodic, n - 1 otherwise (1 point of a
 * symmetric window is 1.0, numpy's hanning(1), where ONNX's formula divides
 * 0 by 0). */
void signal_window_params(const op_object *o, double c[3], int32_t *periodic);

/* ---- DFT (dft.c) and STFT (stft.c) ---------------------------------------- */

/* One transform's layout over a tensor: `outer` blocks of `axis_len`
 * positions of `inner` lines each, `comps` (1 real, 2 complex) values per
 * element; `len` the transform length (zero-padded or truncated from
 * axis_len), `bins` the outputs kept (len, or len / 2 + 1 onesided). */
typedef struct signal_dft_geom {
    int64_t outer, axis_len, inner, comps, len, bins;
    int32_t inverse;
} signal_dft_geom;

/* A length or step the host does not know (CUDA's kernels read it from
 * device memory): the geometries then take the bins and frames from the
 * output's dims and leave the value to the kernel. */
#define SIGNAL_ON_DEVICE (-2)

/* DFT's fields. */
void dft_params(const op_object *o, int32_t *axis, int32_t *inverse, int32_t *onesided);
/* The geometry of a DFT run from its descs, dft_length `len` (-1: none,
 * the axis's length; SIGNAL_ON_DEVICE), with the checks the kernels rely on (the output's
 * dims those of `len`). */
prt_status dft_geom(const op_object *o, const prt_tensor_desc *in, const prt_dims *out,
                    int64_t len, signal_dft_geom *g);

/* STFT's geometry: signal [batch, samples, comps], frames of `len` samples
 * `step` apart, `bins` kept; the window (if any) an input of len values. */
typedef struct signal_stft_geom {
    int64_t batch, samples, comps, frames, len, bins, step;
} signal_stft_geom;
/* The STFT inputs' roles: which data input is the window and which the
 * frame_length (-1: none). The importer drops an omitted window, so with
 * three inputs and two shape inputs input 2 is frame_length. */
void stft_inputs(int32_t nb_in, int32_t nb_sv, int32_t *window, int32_t *length);
/* The same at run time from the descs: input 2 is frame_length when it
 * holds integers. */
void stft_roles(const prt_tensor_desc *in, int32_t nb_in, int32_t *window,
                int32_t *length);
/* The geometry from the descs, the window's input (-1: none) and the
 * values step and len (len -1: the window's length; either may be
 * SIGNAL_ON_DEVICE), with the checks the
 * kernels rely on. */
prt_status stft_geom(const op_object *o, const prt_tensor_desc *in, int32_t window,
                     const prt_dims *out, int64_t step, int64_t len, signal_stft_geom *g);

/* ---- the transform (signal_fft.c) ----------------------------------------- */

/* Scratch slots a CPU kernel's workspace holds: with more threads than
 * this the lines run on the calling thread. */
#define SIGNAL_SLOTS 8

/* Workspace bytes for transforms of length up to n. */
int64_t signal_fft_workspace(int64_t n);

/* The twiddles (and bit reversal for a power of two) of length n, in ws
 * (signal_fft_workspace(n) bytes). Lines of that length are then
 * transformed by signal_fft_line on any thread. */
typedef struct signal_fft {
    int64_t n;
    int32_t pow2;
    const double *tw; /* cos, sin of 2 pi j / n, j < n, interleaved */
    const int32_t *rev;
    double *slots; /* SIGNAL_SLOTS buffers of 4n doubles */
} signal_fft;
void signal_fft_init(signal_fft *f, int64_t n, void *ws);
/* The scratch of this thread's slot: re, im of the line (n each), then
 * the result's (n each). */
double *signal_fft_slot(const signal_fft *f);
/* Transforms the line in slot[0..2n) into slot[2n..4n): bins 0..bins-1 of
 * sum_t x[t] exp(-+2 pi i k t / n) (+ when inverse; no 1/n scaling). */
void signal_fft_line(const signal_fft *f, double *slot, int64_t bins, int32_t inverse);
/* Calls fn over [0, lines) on the context's threads when each has a slot,
 * else on this one. */
void signal_fft_for(int64_t lines, int64_t n, base_range_fn fn, void *arg);

/* A float element as double, and back (float32, float16, bfloat16). */
double signal_load(const void *x, int32_t dtype, int64_t i);
void signal_store(void *y, int32_t dtype, int64_t i, double v);

#endif /* PLUGRT_OPS_OPS_SIGNAL_H */
