/*
 * The CPU's 8-bit convolution over channel-last pixels (internal to
 * libplugrt; QLinearConv's fast path in qconv.c): AVX-512 VNNI, and an
 * exact AVX2 build in int16 (`wide`, below) for CPUs without VNNI.
 *
 * Roles are those of a GEMM with the output pixels as rows and the output
 * channels as columns: a register tile is QC_MR pixels by up to four
 * panels of 16 channels, and each vpdpbusd multiplies four input channels
 * of one pixel (four bytes broadcast, u8) by the same four channels of 16
 * output channels (one 64-byte vector of W, s8). So the activations are
 * read in place, as long as a pixel's channels sit together: the caller
 * transposes an image of x to HWC once (op_qc_to_hwc, C4 bytes a pixel),
 * which is C x H x W bytes where an im2col matrix would be kvol times as
 * many, and the tile finds each kernel position's input pixel by address
 * (a pixel of the padding reads a row of x's zero point). W is packed once
 * at build (op_qc_pack_w) in the order the tile reads it.
 *
 * Zero points: x is stored unsigned (int8 ^ 0x80, qgemm.h's shifted
 * form) with shifted zero point ax; W's shifted zero point must be 0
 * (int8 W with zero point 0, uint8 W with 128: ONNX Runtime's symmetric
 * weights), so that sum (x' - ax) w' = P - ax colsum_w, one int32 per
 * channel (cterm = bias - ax colsum_w) added in the store. The store then
 * requantizes exactly as qgemm.h's store pass does (same float operations,
 * same bits) into an HWC image of y (16 bytes a store), which
 * op_qc_from_hwc transposes to NCHW after.
 */
#ifndef PLUGRT_OPS_CPU_QCONV_KERNEL_H
#define PLUGRT_OPS_CPU_QCONV_KERNEL_H

#include <stdint.h>

#define OP_QC_PANEL 16 /* output channels of a panel of W */
#define OP_QC_NP 4     /* panels of a register tile */
#define OP_QC_MR 6     /* pixels of a register tile */

/* Channels padded to a multiple of 4 (bytes per pixel), -1 on overflow. */
int64_t op_qc_c4(int64_t C);
/* Bytes of W packed for M output channels, C4 channels, kvol positions
 * (-1 on overflow). */
int64_t op_qc_w_bytes(int64_t M, int64_t C, int64_t kvol);
/* W ([M][C][kvol] bytes, each ^ flip) into wp: panel s (channels 16 s..)
 * at wp + s kvol C4 16, its bytes (kp, c4, j, t) at
 * ((kp C4 + 4 c4) 16 + 4 j) + t for channel 16 s + j and input channel
 * 4 c4 + t, zero past M and C. colsum[m] (m < M) = the sum of channel m's
 * stored bytes as int8.
 *
 * `wide` (the AVX2 tiles): int16 elements (the stored byte as int8) in
 * steps of 2 input channels instead of 4: element (kp, c2, j, t) at
 * ((kp C4 + 2 c2) 16 + 2 j) + t, twice op_qc_w_bytes in all; a step is
 * two vectors of 8 channels' int16 pairs (vpmaddwd's lanes).
 *
 * With Mb < M, W is M / Mb groups of Mb channels packed as one
 * block-diagonal convolution of M / Mb C input channels (C4 their count
 * rounded up to 4): channel m's C inputs sit at m / Mb C, zero elsewhere.
 * A group of few channels then fills a panel with its neighbours instead
 * of padding (op_qc_w_bytes of M, M / Mb C). */
void op_qc_pack_w(int64_t M, int64_t Mb, int64_t C, int64_t kvol, const uint8_t *W,
                  uint8_t flip, int wide, void *wp, int32_t *colsum);
/* Pixels [p0, p1) of a CHW image (C channels of hw bytes) into HWC rows of
 * C4 elements from xt's first (pixel p at element (p - p0) C4), each
 * byte ^ flip, channels past C zero; the elements are bytes, or uint16
 * when `wide`. */
void op_qc_to_hwc(const uint8_t *x, int64_t C, int64_t hw, uint8_t flip, int64_t C4,
                  int64_t p0, int64_t p1, int wide, void *xt);

/* Pixels [p0, p1) of an HWC image yt (rows of M16 bytes, M used) into
 * CHW y (M channels of hw bytes). */
void op_qc_from_hwc(const uint8_t *yt, int64_t M16, int64_t M, int64_t hw, int64_t p0,
                    int64_t p1, uint8_t *y);

/* One image's convolution (1 or 2 spatial dims; 1-D as H = 1), or one
 * group's of a grouped one: then xt, zrow, wp, cterm, scale and yt point
 * at the group's first channel, C4 is its input channels rounded up to 4
 * (the 4 bytes past a group's last channel belong to the next group or
 * the row's padding, and meet W's zero padding) and ldx is the whole
 * pixel's bytes. */
typedef struct op_qc_args {
    /* xt and wp in int16 (the AVX2 tiles); then xt is padded: H, W are the
     * padded image's, ph = pw = 0 and every window lies inside it (zrow
     * unused) */
    int32_t wide;
    const uint8_t *xt;   /* H W pixels, ldx elements apart (op_qc_to_hwc);
                          * C4 readable from each (3 of slack past x) */
    const uint8_t *zrow; /* the padding pixel (ax, zeros past the channels) */
    int64_t C4, ldx, H, W, OH, OW;
    int64_t kh, kw, sh, sw, dh, dw, ph, pw;
    const uint8_t *wp;    /* op_qc_pack_w (the group's M, C4) */
    int64_t M;            /* output channels (of the group): stores stop there */
    const int32_t *cterm; /* per channel, 16 readable past each panel's first */
    const float *scale;   /* the multiplier per channel, as cterm */
    int32_t zp, is_u8;    /* y's zero point; 1 uint8 y, 0 int8 */
    uint8_t *yt;          /* pixel p's channels at yt + p M16 */
    int64_t M16;          /* bytes between pixels of yt */
    int64_t P;            /* OH OW */
} op_qc_args;

/* Output pixels [p0, p1) of panels [s0, s1) of channels. Blocks may run
 * concurrently. Only where op_qg_vnni() (qgemm.h), or with `wide` where
 * op_qg_wide(). */
void op_qc_conv(const op_qc_args *a, int64_t p0, int64_t p1, int64_t s0, int64_t s1);

/* ---- pointwise on the int16 tiles, channel-first -------------------------
 *
 * A 1x1 convolution at stride 1 without padding, one group (`wide` only):
 * vectors run along pixels instead, so that neither x nor y is
 * transposed. x goes to pairs of channels, pixel by pixel (op_qc_pw_pairs:
 * pair q's pixel p at xp + (q P16 + p) 2, channel 2 q then 2 q + 1, as
 * uint16; a missing odd channel 0), a vpmaddwd multiplies 8 pixels' pair
 * by one output channel's two weights (broadcast, read from op_qc_pack_w's
 * wide layout, where they are one int32), and the sums are requantized
 * straight into y's planes. Same integer sums and store operations as the
 * tiles, so the same bits. */
/* W and the store of the channel-first kernels (op_qc_pw, op_qc_cf). */
typedef struct op_qc_cf_out {
    const int16_t *wp;    /* W packed wide (block after block for op_qc_cf) */
    int64_t C4, M;        /* W's packed inputs (of a block), y's channels */
    const int32_t *cterm; /* per channel, as op_qc_args */
    const float *scale;
    int32_t zp, is_u8;
} op_qc_cf_out;

typedef struct op_qc_pw_args {
    const uint16_t *xp; /* C2 pairs of P16 pixels (op_qc_pw_pairs) */
    int64_t C2, P, P16; /* pairs, pixels, pixels rounded up to 16 */
    op_qc_cf_out o;
    uint8_t *y; /* M planes of P bytes */
} op_qc_pw_args;

/* Pairs [q0, q1) of a CHW image (C channels of P bytes, each ^ flip) into
 * xp (pixels P to P16 of each pair 0). */
void op_qc_pw_pairs(const uint8_t *x, int64_t C, int64_t P, int64_t P16, uint8_t flip,
                    int64_t q0, int64_t q1, uint16_t *xp);
/* Output channels [m0, m1) by pixels [p0, p1) (p0 a multiple of 16). Blocks may run
 * concurrently. Only where op_qg_wide(). */
void op_qc_pw(const op_qc_pw_args *a, int64_t m0, int64_t m1, int64_t p0, int64_t p1);

/* ---- grouped at stride 1 on the int16 tiles, channel-first ---------------
 *
 * op_qc_pw's way for a grouped convolution at stride 1 (any kernel,
 * dilation and padding; groups of an even number of input channels) on
 * the `wide` path: vectors along an output row, so that neither x nor y
 * is transposed and a group's products skip the other groups' zeros: x
 * goes to pairs of channels, its padding written out, pixel by pixel
 * (op_qc_cf_pairs: pair q's padded pixel e at xp + (q PP + e) 2, channel
 * 2 q then 2 q + 1, as uint16; a missing odd channel 0), a vpmaddwd
 * multiplies 16 outputs' input pairs at one kernel position by one output
 * channel's two weights there (broadcast: one int32 of op_qc_pack_w's
 * wide layout), and the sums are requantized straight into y's planes.
 * The same integer sums and store operations as the tiles: the same bits.
 * A 1x1 convolution without padding is one row of OH OW pixels. */
typedef struct op_qc_cf_args {
    const uint16_t *xp;     /* pairs of PP padded pixels (op_qc_cf_pairs) */
    int64_t PP, Wp;         /* a pair's pixels (Hp Wp + 16), a padded row's */
    int64_t OH, OW;         /* output rows and their pixels */
    int64_t kh, kw, dh, dw; /* kernel and dilation */
    int64_t Cg, Mg;         /* a group's input and output channels */
    int64_t Mb;             /* channels of a packed block (qconv_group_block) */
    int64_t wblock;         /* int16 of W a packed block */
    op_qc_cf_out o;
    uint8_t *y; /* M planes of OH OW bytes */
} op_qc_cf_args;

/* Pairs [q0, q1) of a CHW image (C channels of H x W bytes, each ^ flip)
 * into xp, padded: x's pixel (h, w) at (top + h) Wp + left + w of Hp x Wp,
 * the rest ax (0 for a missing odd channel), and 16 pixels of 0 after. */
void op_qc_cf_pairs(const uint8_t *x, int64_t C, int64_t H, int64_t W, int64_t top,
                    int64_t left, int64_t Hp, int64_t Wp, int64_t PP, uint8_t flip,
                    uint16_t ax, int64_t q0, int64_t q1, uint16_t *xp);
/* Output channels [m0, m1) by output rows [r0, r1). Blocks may run
 * concurrently. Only where op_qg_wide(). */
void op_qc_cf(const op_qc_cf_args *a, int64_t m0, int64_t m1, int64_t r0, int64_t r1);

/* ---- depthwise, through the float planes of conv_dw.c -------------------
 *
 * A depthwise QLinearConv (or ConvInteger) runs op_dw_run (cpu_kernels.h)
 * on planes of x - x_zp and taps w - w_zp in float: every product is an
 * integer of at most 255 x 255 and every partial sum one below 2^24 while
 * the taps are at most OP_QC_DW_MAX_TAPS, so float sums them exactly in
 * any order and the int32 result is the integer one. */
#define OP_QC_DW_MAX_TAPS 256 /* 256 x 255 x 255 < 2^24 */

/* out[i] = (x[i] ^ flip) - zp as float, for n bytes. */
void op_qc_plane_f32(const uint8_t *x, int64_t n, uint8_t flip, int32_t zp, float *out);
/* n exact integer sums (as float) into y: with is_i32 the int32 sums;
 * else sum + bias requantized as qgemm.h's store pass (scale, zp, uint8
 * when is_u8, else int8). */
void op_qc_requant_f32(const float *sum, int64_t n, int32_t bias, float scale, int32_t zp,
                       int is_u8, int is_i32, void *y);

#endif /* PLUGRT_OPS_CPU_QCONV_KERNEL_H */
