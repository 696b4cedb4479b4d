/*
 * Generators of the coverage matrix (cov.h) for the data-movement ops:
 * the reshaping ops, Transpose, Gather*, Scatter*, Slice, Concat, Split,
 * Tile, Pad, Expand, the fills (ConstantOfShape, Range, EyeLike, OneHot,
 * Trilu), DepthToSpace and SpaceToDepth, Hardmax, and the data-dependent
 * NonZero, Compress, Unique and NonMaxSuppression. Results are compared byte for byte;
 * shape inputs are constants, as a network's are; every index is in range (an index out
 * of range fails the reference's run: a bug of this file).
 */
#include <math.h>
#include <string.h>

#include "cov.h"

static int64_t rnd(cov *c, int64_t lo, int64_t hi)
{
    return tu_rng_range(cov_rng(c), lo, hi);
}

/* A random axis of rank r, negative half the time, and its position. */
static int32_t rand_axis(cov *c, int32_t r, int32_t *pos)
{
    int32_t a = (int32_t)rnd(c, 0, r - 1);
    *pos = a;
    return rnd(c, 0, 1) ? a - r : a;
}

/* Alternately int32 and int64 (the index inputs take both). */
static int32_t index_dtype(int v)
{
    return v & 1 ? PRT_INT32 : PRT_INT64;
}

/* A 1-D index tensor of n values; int32 clamps (INT64_MAX, the "to the
 * end" of exporters, becomes INT32_MAX). */
static ot_tensor ints(int32_t dtype, int32_t n, const int64_t *v)
{
    ot_tensor t = ot_make(dtype, D1(n));
    for (int32_t i = 0; i < n; i++)
        if (dtype == PRT_INT64)
            ((int64_t *)t.data)[i] = v[i];
        else
            ((int32_t *)t.data)[i] = v[i] > INT32_MAX   ? INT32_MAX
                                     : v[i] < INT32_MIN ? INT32_MIN
                                                        : (int32_t)v[i];
    return t;
}

static ot_tensor scalar_i(int32_t dtype, prt_dims d, int64_t v)
{
    ot_tensor t = ot_make(dtype, d);
    ot_set(&t, 0, (double)v);
    return t;
}

/* Indices in [-n, n-1] (negative ones count from the end). */
static ot_tensor rand_indices(cov *c, int32_t dtype, prt_dims d, int64_t n)
{
    ot_tensor t = ot_make(dtype, d);
    for (int64_t i = 0; i < tu_volume(&d); i++)
        ot_set(&t, i, (double)rnd(c, -n, n - 1));
    return t;
}

/* p[0..n) a random permutation of 0..n-1. */
static void shuffle(cov *c, int32_t *p, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        p[i] = i;
    for (int32_t i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)rnd(c, 0, i), t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

/* Dims of rank r (up to 8) in [1, 3]: the most dims at a small volume. */
static prt_dims small_dims(cov *c, int32_t r)
{
    int64_t d[PRT_MAX_DIMS];
    for (int32_t i = 0; i < r; i++)
        d[i] = rnd(c, 1, 3);
    return tu_dims(r, d);
}

/* "[3, 0, 5]" into b. */
static const char *dstr(const prt_dims *d, char *b, size_t n)
{
    size_t k = (size_t)snprintf(b, n, "[");
    for (int32_t i = 0; i < d->nb_dims && k < n; i++)
        k += (size_t)snprintf(b + k, n - k, "%s%lld", i ? ", " : "", (long long)d->d[i]);
    if (k < n)
        snprintf(b + k, n - k, "]");
    return b;
}

/* Names the case by op, input 0's dims and `tag`, and runs it. */
static void run(cov *c, oc_case *k, const char *tag)
{
    char what[200], ds[64];
    snprintf(what, sizeof what, "%s %s %s", k->op, dstr(&k->in[0].dims, ds, sizeof ds),
             tag);
    cov_case(c, what, k);
}

/* Index tuples (ind's last dim m) into dims d[first..first+m), each
 * coordinate negative half the time; with `distinct` no tuple repeats (the
 * caller keeps the count within 32 and the dims' product). */
static void fill_tuples(cov *c, ot_tensor *ind, const prt_dims *d, int32_t first,
                        int distinct)
{
    const int32_t m = (int32_t)ind->dims.d[ind->dims.nb_dims - 1];
    const int64_t n = tu_volume(&ind->dims) / m;
    int64_t space = 1, used[32];
    for (int32_t j = 0; j < m; j++)
        space *= d->d[first + j];
    for (int64_t t = 0; t < n; t++) {
        int64_t lin, dup;
        do {
            lin = rnd(c, 0, space - 1);
            dup = 0;
            for (int64_t u = 0; distinct && u < t; u++)
                dup |= used[u] == lin;
        } while (dup);
        if (t < 32)
            used[t] = lin;
        for (int32_t j = m - 1; j >= 0; j--) {
            int64_t s = d->d[first + j], v = lin % s;
            lin /= s;
            ot_set(ind, t * m + j, (double)(rnd(c, 0, 1) ? v - s : v));
        }
    }
}

/* ---- layout: Transpose, the reshaping ops, Shape, Size -------------------- */

/* Ranks 0 to 5 (0 and 2 with ONNX's default, the dims reversed), the
 * largest rank, and a matrix of many CUDA blocks. */
static void gen_transpose(cov *c, const char *op, int32_t dt)
{
    for (int32_t v = 0; v <= 7; v++) {
        oc_case k = {.op = op, .nb = 1, .exact = 1};
        int32_t perm[PRT_MAX_DIMS], r = v == 6 ? 2 : v == 7 ? PRT_MAX_DIMS : v;
        prt_field f = ot_fld_i32("perm", perm, r);
        shuffle(c, perm, r);
        k.in[0] = cov_random(c, dt,
                             v == 6   ? D2(67, 131)
                             : v == 7 ? small_dims(c, r)
                                      : cov_dims(c, r, 1),
                             1);
        if (r != 0 && v != 2) {
            k.f = &f;
            k.nf = 1;
        }
        run(c, &k, k.nf ? "perm" : "default perm");
    }
}

/* Every axis in [-r, r] of ranks 0 to 4, and the default (1). */
static void gen_flatten(cov *c, const char *op, int32_t dt)
{
    for (int32_t rank = 0; rank <= 5; rank++) {
        oc_case k = {.op = op, .nb = 1, .exact = 1};
        int32_t r = rank == 5 ? 3 : rank, axis = (int32_t)rnd(c, -r, r);
        prt_field f = ot_fld_i32("axis", &axis, 1);
        char tag[32];
        k.in[0] = cov_random(c, dt, cov_dims(c, r, 1), 1);
        if (rank < 5) {
            k.f = &f;
            k.nf = 1;
        }
        snprintf(tag, sizeof tag, k.nf ? "axis %d" : "default axis", (int)axis);
        run(c, &k, tag);
    }
}

/* The shape as a constant shape input: -1 inferred, 0 copying the input's
 * dim, allowzero's 0 dims, to and from a scalar. */
static void gen_reshape(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 5; v++) {
        oc_case k = {.op = op, .nb = 2, .exact = 1};
        int32_t allowzero = 1, r = (int32_t)rnd(c, 1, 4);
        prt_field f = ot_fld_i32("allowzero", &allowzero, 1);
        prt_dims d = cov_dims(c, r, v == 2);
        int64_t s[PRT_MAX_DIMS + 1];
        int32_t n = 0;
        if (v == 0) { /* [-1] */
            s[n++] = -1;
        } else if (v == 1) { /* [0, -1]: dim 0 copied, the rest inferred */
            s[n++] = 0;
            s[n++] = -1;
        } else if (v == 2) { /* the dims reversed, a 1 in front: 0 dims stay 0 */
            s[n++] = 1;
            for (int32_t i = r - 1; i >= 0; i--)
                s[n++] = d.d[i];
            k.f = &f;
            k.nf = 1;
        } else if (v == 3) { /* one element to a scalar */
            d = D3(1, 1, 1);
        } else { /* a scalar to [1, -1] */
            d = D0();
            s[n++] = 1;
            s[n++] = -1;
        }
        k.in[0] = cov_random(c, dt, d, 1);
        k.in[1] = ints(PRT_INT64, n, s);
        k.role[1] = OC_SHAPE;
        run(c, &k, k.nf ? "allowzero" : "");
    }
}

/* n axes inserted into (Unsqueeze) or taken from (Squeeze) rank r: the
 * axes of the larger rank, negative half the time, unordered. */
static int32_t pick_axes(cov *c, int32_t r, int32_t n, int32_t *axes, int32_t *pos)
{
    int32_t p[PRT_MAX_DIMS];
    shuffle(c, p, r + n);
    for (int32_t i = 0; i < n; i++) {
        pos[i] = p[i];
        axes[i] = rnd(c, 0, 1) ? p[i] - (r + n) : p[i];
    }
    return r + n;
}

/* The axes as a shape input (opset 13) or a field (opset 1 to 12); Squeeze
 * also without axes (every dim of 1 goes). */
static void gen_squeeze(cov *c, const char *op, int32_t dt)
{
    const int un = !strcmp(op, "Unsqueeze");
    for (int v = 0; v < 5; v++) {
        oc_case k = {.op = op, .nb = 1, .exact = 1};
        int32_t r = (int32_t)rnd(c, 0, 3), n = (int32_t)rnd(c, 1, 3);
        int32_t axes[PRT_MAX_DIMS], pos[PRT_MAX_DIMS];
        int32_t big = pick_axes(c, r, n, axes, pos);
        prt_field f = ot_fld_i32("axes", axes, n);
        prt_dims small = cov_dims(c, r, 1), d = small;
        int64_t a64[PRT_MAX_DIMS];
        if (!un) { /* small with 1s at pos */
            int64_t full[PRT_MAX_DIMS];
            for (int32_t i = 0, j = 0; i < big; i++) {
                int ins = 0;
                for (int32_t q = 0; q < n; q++)
                    ins |= pos[q] == i;
                full[i] = ins ? 1 : small.d[j++];
            }
            d = tu_dims(big, full);
        }
        k.in[0] = cov_random(c, dt, d, 1);
        for (int32_t i = 0; i < n; i++)
            a64[i] = axes[i];
        if (v % 2 == 0) {
            k.in[1] = ints(PRT_INT64, n, a64);
            k.role[1] = OC_SHAPE;
            k.nb = 2;
        } else if (v == 1 || un) {
            k.f = &f;
            k.nf = 1;
        }
        run(c, &k, k.nb == 2 ? "axes input" : k.nf ? "axes field" : "no axes");
    }
}

/* Ranks 0 to 4, and ONNX 15's start and end (negative, clamped, empty). */
static void gen_shape(cov *c, const char *op, int32_t dt)
{
    static const int32_t se[4][2] = {{1, 3}, {-2, 9}, {0, -1}, {3, 1}};
    const int shape = !strcmp(op, "Shape");
    for (int v = 0; v < (shape ? 9 : 5); v++) {
        oc_case k = {.op = op, .nb = 1, .exact = 1};
        prt_field f[2];
        char tag[32] = "";
        k.in[0] = cov_random(c, dt, cov_dims(c, v < 5 ? v : 4, 1), 1);
        if (v >= 5) {
            f[0] = ot_fld_i32("start", &se[v - 5][0], 1);
            f[1] = ot_fld_i32("end", &se[v - 5][1], 1);
            k.f = f;
            k.nf = 2;
            snprintf(tag, sizeof tag, "start %d end %d", (int)se[v - 5][0],
                     (int)se[v - 5][1]);
        }
        run(c, &k, tag);
    }
}

/* ---- gathers --------------------------------------------------------------- */

/* Every axis, indices of rank 0 to 2 in [-d, d-1], int32 and int64, network
 * inputs and constants; one large gather. */
static void gen_gather(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 6; v++) {
        oc_case k = {.op = op, .nb = 2, .exact = 1};
        int32_t rank = 1 + v % 4, ax, axis = rand_axis(c, rank, &ax);
        prt_field f = ot_fld_i32("axis", &axis, 1);
        prt_dims d = v == 5 ? D2(1000, 67) : cov_dims(c, rank, 1);
        char tag[64], ds[32];
        if (v == 5)
            axis = ax = 0;
        if (d.d[ax] == 0)
            d.d[ax] = 4;
        k.f = &f;
        k.nf = 1;
        k.in[0] = cov_random(c, dt, d, 1);
        k.in[1] = rand_indices(c, index_dtype(v),
                               v == 5 ? D1(301) : cov_dims(c, v % 3, 1), d.d[ax]);
        k.role[1] = v % 3 == 1 ? OC_CONST : OC_DATA;
        snprintf(tag, sizeof tag, "axis %d, indices %s", (int)axis,
                 dstr(&k.in[1].dims, ds, sizeof ds));
        run(c, &k, tag);
    }
}

/* Indices of data's rank, each dim but the axis at most data's, any length
 * along it. */
static void gen_gather_elements(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 5; v++) {
        oc_case k = {.op = op, .nb = 2, .exact = 1};
        int32_t rank = 1 + v % 4, ax, axis = rand_axis(c, rank, &ax);
        prt_field f = ot_fld_i32("axis", &axis, 1);
        prt_dims d = cov_dims(c, rank, 1), id = d;
        char tag[32];
        if (d.d[ax] == 0)
            d.d[ax] = 3;
        for (int32_t i = 0; i < rank; i++)
            id.d[i] = i == ax ? rnd(c, 0, 6) : rnd(c, d.d[i] > 0, d.d[i]);
        k.f = &f;
        k.nf = 1;
        k.in[0] = cov_random(c, dt, d, 1);
        k.in[1] = rand_indices(c, index_dtype(v), id, d.d[ax]);
        k.role[1] = v == 2 ? OC_CONST : OC_DATA;
        snprintf(tag, sizeof tag, "axis %d", (int)axis);
        run(c, &k, tag);
    }
}

/* batch_dims 0 to 2, tuples of 1 to r - b coordinates. */
static void gen_gather_nd(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 5; v++) {
        oc_case k = {.op = op, .nb = 2, .exact = 1};
        int32_t r = (int32_t)rnd(c, 1, 4), b = (int32_t)rnd(c, 0, r - 1 < 2 ? r - 1 : 2);
        int32_t m = (int32_t)rnd(c, 1, r - b), nfree = (int32_t)rnd(c, 0, 2);
        prt_field f = ot_fld_i32("batch_dims", &b, 1);
        prt_dims d = cov_dims(c, r, 1), fr = cov_dims(c, nfree, 1), id;
        char tag[96], ds[48];
        for (int32_t j = b; j < b + m; j++)
            d.d[j] = d.d[j] ? d.d[j] : 2;
        id.nb_dims = b + nfree + 1;
        for (int32_t i = 0; i < id.nb_dims; i++)
            id.d[i] = i < b ? d.d[i] : i < b + nfree ? fr.d[i - b] : m;
        k.in[0] = cov_random(c, dt, d, 1);
        k.in[1] = ot_make(index_dtype(v), id);
        fill_tuples(c, &k.in[1], &d, b, 0);
        k.role[1] = v == 3 ? OC_CONST : OC_DATA;
        if (b) {
            k.f = &f;
            k.nf = 1;
        }
        snprintf(tag, sizeof tag, "batch_dims %d, indices %s", (int)b,
                 dstr(&id, ds, sizeof ds));
        run(c, &k, tag);
    }
}

/* ---- scatters -------------------------------------------------------------- */

static const char *const reductions[] = {"none", "add", "mul", "max", "min"};

/* Bytes compared exactly but where a reduction does float arithmetic: a
 * NaN it makes (inf - inf) has the bits of the hardware that made it (x86's
 * negative quiet NaN, a GPU's canonical one); values are compared then,
 * NaN matching NaN. */
static int scatter_exact(int red, int32_t dt)
{
    return red == 0 || !(dt == PRT_FLOAT32 || dt == PRT_FLOAT16 || dt == PRT_BFLOAT16);
}

/* Every reduction; "none" on distinct places (with repeats the last one
 * wins, an order a parallel kernel need not keep), the others with
 * repeats. */
static void gen_scatter_nd(cov *c, const char *op, int32_t dt)
{
    for (int red = 0; red < 5; red++) {
        oc_case k = {.op = op, .nb = 3, .exact = scatter_exact(red, dt)};
        int32_t r = (int32_t)rnd(c, 1, 3), m = (int32_t)rnd(c, 1, r);
        prt_field f = ot_fld_str("reduction", reductions[red]);
        prt_dims d = cov_dims(c, r, 1), id, ud;
        int64_t space = 1;
        for (int32_t j = 0; j < m; j++) {
            d.d[j] = d.d[j] ? d.d[j] : 2;
            space *= d.d[j];
        }
        if (red == 0)
            id = D2(rnd(c, 0, space < 6 ? space : 6), m);
        else
            id = D3(rnd(c, 1, 3), rnd(c, 0, 4), m);
        ud.nb_dims = 0;
        for (int32_t i = 0; i < id.nb_dims - 1; i++)
            ud.d[ud.nb_dims++] = id.d[i];
        for (int32_t i = m; i < r; i++)
            ud.d[ud.nb_dims++] = d.d[i];
        k.in[0] = cov_random(c, dt, d, 1);
        k.in[1] = ot_make(index_dtype(red), id);
        fill_tuples(c, &k.in[1], &d, 0, red == 0);
        k.in[2] = cov_random(c, dt, ud, 1);
        k.role[1] = red == 2 ? OC_CONST : OC_DATA;
        k.f = &f;
        k.nf = 1;
        run(c, &k, reductions[red]);
    }
}

static void gen_scatter_elements(cov *c, const char *op, int32_t dt)
{
    for (int red = 0; red < 5; red++) {
        oc_case k = {.op = op, .nb = 3, .exact = scatter_exact(red, dt)};
        int32_t rank = (int32_t)rnd(c, 1, 4), ax, axis = rand_axis(c, rank, &ax);
        prt_field f[2] = {ot_fld_str("reduction", reductions[red]),
                          ot_fld_i32("axis", &axis, 1)};
        prt_dims d = cov_dims(c, rank, 1), id = d;
        int64_t n, off = rnd(c, 0, 8);
        char tag[48];
        if (d.d[ax] == 0)
            d.d[ax] = 3;
        n = d.d[ax];
        for (int32_t i = 0; i < rank; i++)
            id.d[i] = rnd(c, d.d[i] > 0, i == ax && red ? 6 : d.d[i]);
        k.in[0] = cov_random(c, dt, d, 1);
        k.in[1] = ot_make(index_dtype(red), id);
        /* "none": along each line of the axis, distinct places */
        for (int64_t e = 0; e < tu_volume(&id); e++) {
            int64_t idx[PRT_MAX_DIMS], p;
            ot_unravel(&id, e, idx);
            p = red ? rnd(c, 0, n - 1) : (idx[ax] + off) % n;
            ot_set(&k.in[1], e, (double)(rnd(c, 0, 1) ? p - n : p));
        }
        k.in[2] = cov_random(c, dt, id, 1);
        k.f = f;
        k.nf = 2;
        snprintf(tag, sizeof tag, "%s axis %d", reductions[red], (int)axis);
        run(c, &k, tag);
    }
}

/* ---- joins and cuts: Concat, Split, Slice, Tile, Pad, Expand ---------------- */

/* 1 to 4 inputs, one of them empty along the axis, one a constant; one
 * large join; the most inputs (8). */
static void gen_concat(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 7; v++) {
        int32_t rank = v == 4 || v == 6 ? 2 : (int32_t)rnd(c, 1, 4), ax;
        oc_case k = {.op = op,
                     .nb = v == 4   ? 3
                           : v == 5 ? 8
                           : v == 6 ? 2
                                    : 1 + v,
                     .exact = 1};
        int32_t axis = rand_axis(c, rank, &ax);
        prt_field f = ot_fld_i32("axis", &axis, 1);
        prt_dims d = v == 4 ? D2(100, 1) : v == 6 ? D2(5, 1) : cov_dims(c, rank, 1);
        char tag[32];
        if (v == 4 || v == 6)
            axis = ax = 1;
        for (int32_t i = 0; i < k.nb; i++) {
            /* v 6: parts of 16 and 32 elements, moved 16 bytes at a time
             * where the type allows (opk_concat's widest unit). */
            d.d[ax] = v == 4 ? 37 + i : v == 6 ? 16 * (i + 1) : i == 1 ? 0 : rnd(c, 1, 6);
            k.in[i] = cov_random(c, dt, d, 1);
            k.role[i] = i == 2 ? OC_CONST : OC_DATA;
        }
        k.f = &f;
        k.nf = 1;
        snprintf(tag, sizeof tag, "of %d, axis %d", (int)k.nb, (int)axis);
        run(c, &k, tag);
    }
}

/* The parts from a field (a 0 among them), num_outputs' ceil rule, a
 * split input, equal parts; a transformer's q, k and v of 32 each (moved
 * 16 bytes at a time where the type allows: opk_split's widest unit). */
static void gen_split(cov *c, const char *op, int32_t dt)
{
    static const char *const how[] = {"split field", "num_outputs", "split input",
                                      "equal parts", "q, k and v"};
    for (int v = 0; v < 5; v++) {
        oc_case k = {.op = op, .nb = 1, .exact = 1};
        int32_t rank = v == 4 ? 3 : (int32_t)rnd(c, 1, 3), ax,
                axis = v == 4 ? (ax = 2, -1) : rand_axis(c, rank, &ax);
        int32_t n = v == 4 ? 3 : (int32_t)rnd(c, 1, 4), parts[8];
        prt_dims d = v == 4 ? D3(2, 5, 96) : cov_dims(c, rank, 1);
        int64_t len = d.d[ax], rest = len, p64[8];
        prt_field f[2] = {ot_fld_i32("axis", &axis, 1)};
        if (v == 1) /* the last part may not be negative */
            while ((n - 1) * ((len + n - 1) / n) > len)
                n--;
        if (v == 3) {
            len = n * rnd(c, 0, 3);
            d.d[ax] = len;
        }
        for (int32_t i = 0; i < n; i++) {
            p64[i] = v == 4 ? 32 : i == n - 1 ? rest : rnd(c, 0, rest);
            parts[i] = (int32_t)p64[i];
            rest -= p64[i];
        }
        if (v == 0 || v == 4)
            f[1] = ot_fld_i32("split", parts, n);
        else
            f[1] = ot_fld_i32(v == 1 ? "num_outputs" : "outputs", &n, 1);
        k.f = f;
        k.nf = 2;
        k.nb_out = n;
        k.in[0] = cov_random(c, dt, d, 1);
        if (v == 2) {
            k.in[1] = ints(index_dtype(rank), n, p64);
            k.role[1] = OC_BOTH;
            k.nb = 2;
        }
        run(c, &k, how[v]);
    }
}

/* starts and ends in and past either end, axes in any order and negative,
 * steps negative too, as inputs (the optional ones left out now and then)
 * or opset 1's fields; exporters' INT64_MAX / INT64_MIN bounds. */
static void gen_slice(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 6; v++) {
        oc_case k = {.op = op, .exact = 1};
        const int32_t vdt = index_dtype(v);
        int32_t rank = v == 4 ? PRT_MAX_DIMS : (int32_t)rnd(c, 1, 4);
        int32_t n = (int32_t)rnd(c, 1, rank), perm[PRT_MAX_DIMS], ax32[PRT_MAX_DIMS];
        int64_t st[PRT_MAX_DIMS], en[PRT_MAX_DIMS], ax[PRT_MAX_DIMS], sp[PRT_MAX_DIMS];
        prt_field f[3];
        char tag[48];
        shuffle(c, perm, rank);
        for (int32_t i = 0; i < n; i++) {
            int64_t far = rnd(c, 0, 1) ? INT64_MAX : 1000000000;
            ax[i] = rnd(c, 0, 1) ? perm[i] : perm[i] - rank;
            ax32[i] = (int32_t)ax[i];
            sp[i] = v == 5 ? 1 : rnd(c, 0, 3) ? rnd(c, 1, 3) : -rnd(c, 1, 2);
            st[i] = rnd(c, 0, 5)       ? rnd(c, -9, 9)
                    : sp[i] < 0        ? far
                    : far == INT64_MAX ? INT64_MIN
                                       : -far;
            en[i] = rnd(c, 0, 4)       ? rnd(c, -9, 9)
                    : sp[i] > 0        ? far
                    : far == INT64_MAX ? INT64_MIN
                                       : -far;
        }
        k.in[0] =
            cov_random(c, dt, v == 4 ? small_dims(c, rank) : cov_dims(c, rank, 1), 1);
        if (v == 5) {
            f[0] = (prt_field){"starts", st, PRT_FIELD_INT64, n};
            f[1] = (prt_field){"ends", en, PRT_FIELD_INT64, n};
            f[2] = ot_fld_i32("axes", ax32, n);
            k.f = f;
            k.nf = 2 + (int32_t)rnd(c, 0, 1);
            k.nb = 1;
            run(c, &k, "fields");
            continue;
        }
        k.nb = 3 + (int32_t)rnd(c, 0, 2);
        for (int32_t i = 0; i < n; i++)
            if (sp[i] != 1) /* steps without the input are 1 */
                k.nb = 5;
        k.in[1] = ints(vdt, n, st);
        k.in[2] = ints(vdt, n, en);
        if (k.nb > 3)
            k.in[3] = ints(vdt, n, ax);
        if (k.nb > 4)
            k.in[4] = ints(vdt, n, sp);
        for (int32_t i = 1; i < k.nb; i++)
            k.role[i] = OC_BOTH;
        snprintf(tag, sizeof tag, "%d axes, %d inputs", (int)n, (int)k.nb);
        run(c, &k, tag);
    }
}

/* repeats 0 to 3 per dim (a shape input), ranks 1 to 4. */
static void gen_tile(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 4; v++) {
        oc_case k = {.op = op, .nb = 2, .exact = 1};
        int32_t rank = 1 + v;
        int64_t rep[PRT_MAX_DIMS];
        for (int32_t i = 0; i < rank; i++)
            rep[i] = rnd(c, v == 0 ? 0 : 1, 3);
        k.in[0] = cov_random(c, dt, cov_dims(c, rank, 1), 1);
        k.in[1] = ints(PRT_INT64, rank, rep);
        k.role[1] = OC_SHAPE;
        run(c, &k, "");
    }
}

/* Every mode; pads as an input (data and shape) or a field, on every axis
 * or on some (field axes); the constant from an input or field value;
 * negative pads (crops) in constant mode, pads longer than the dim in the
 * others (which need data where they pad). */
static void gen_pad(cov *c, const char *op, int32_t dt)
{
    static const char *const modes[] = {"constant", "reflect", "edge", "wrap"};
    for (int v = 0; v < 7; v++) {
        const char *mode = modes[v % 4];
        const int field = v >= 4;
        oc_case k = {.op = op, .nb = 1, .exact = 1};
        int32_t rank = (int32_t)rnd(c, 1, 4), n = field ? 1 + (rank > 1) : rank;
        int32_t axes[PRT_MAX_DIMS];
        int64_t pads[2 * PRT_MAX_DIMS];
        float value = -0.5f;
        prt_field f[4] = {ot_fld_str("mode", mode)};
        prt_dims d = cov_dims(c, rank, v % 4 == 0);
        char tag[48];
        for (int32_t i = 0; i < n; i++) {
            /* the field's axes: the first, and the last counted from the end */
            int32_t a = field && i ? rank - 1 : i;
            int64_t s = d.d[a];
            axes[i] = i ? a - rank : a;
            pads[i] = v % 4 ? rnd(c, 0, s + 2) : rnd(c, -1, 3);
            pads[n + i] = v % 4 ? rnd(c, 0, s + 2) : rnd(c, -1, 3);
            if (s + pads[i] + pads[n + i] < 0)
                pads[i] = pads[n + i] = 1;
        }
        k.f = f;
        k.nf = 1;
        k.in[0] = cov_random(c, dt, d, 1);
        if (field) {
            f[k.nf++] = (prt_field){"pads", pads, PRT_FIELD_INT64, 2 * n};
            f[k.nf++] = ot_fld_i32("axes", axes, n);
            if (v == 4)
                f[k.nf++] = ot_fld_f32("value", &value);
        } else {
            k.in[k.nb] = ints(PRT_INT64, 2 * n, pads);
            k.role[k.nb++] = OC_BOTH;
        }
        if (v == 0 || v == 6) { /* constant_value, a scalar of x's dtype */
            k.in[k.nb] = cov_random(c, dt, D0(), 0);
            k.role[k.nb++] = v ? OC_CONST : OC_DATA;
        }
        snprintf(tag, sizeof tag, "%s, pads %s%s", mode, field ? "field" : "input",
                 k.nb > 1 + !field ? ", constant input" : "");
        run(c, &k, tag);
    }
}

/* Data broadcast to a shape that adds dims (up to the largest rank),
 * keeps them (value 1), grows them from 1, or makes them 0; a shape
 * shorter than the data; one large broadcast. */
static void gen_expand(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 7; v++) {
        oc_case k = {.op = op, .nb = 2, .exact = 1};
        int32_t r = (int32_t)rnd(c, 0, 3);
        int32_t extra = v == 0 ? 0 : v == 6 ? PRT_MAX_DIMS - r : (int32_t)rnd(c, 0, 2);
        int32_t skip = v == 0 ? (int32_t)rnd(c, 0, r) : 0, n = 0;
        prt_dims d = v == 5 ? D2(1, 300) : cov_dims(c, r, 0);
        int64_t s[PRT_MAX_DIMS];
        if (v == 5) {
            r = 2;
            extra = skip = 0;
        }
        for (int32_t i = 0; i < r && v < 5; i++)
            if (rnd(c, 0, 1))
                d.d[i] = 1;
        for (int32_t i = 0; i < extra; i++)
            s[n++] = rnd(c, 1, v == 6 ? 2 : 4);
        for (int32_t i = skip; i < r; i++)
            s[n++] = v == 5 && i == 0 ? 200
                     : d.d[i] == 1    ? rnd(c, 0, 5)
                     : rnd(c, 0, 1)   ? d.d[i]
                                      : 1;
        k.in[0] = cov_random(c, dt, d, 1);
        k.in[1] = ints(PRT_INT64, n, s);
        k.role[1] = OC_SHAPE;
        run(c, &k, v == 0 ? "shorter shape" : "");
    }
}

/* ---- fills: ConstantOfShape, Range, EyeLike, Trilu, OneHot ------------------- */

/* The cell's dtype is the output's: fields dtype and value (a float or an
 * integer field), the default 0, a scalar and an empty output. */
static void gen_constant_of_shape(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 4; v++) {
        oc_case k = {.op = op, .nb = 1, .exact = 1};
        float fv = -2.75f;
        int32_t iv = dt == PRT_UINT8 ? 200 : dt == PRT_BOOL ? 1 : -7, type = dt;
        prt_field f[2] = {ot_fld_i32("dtype", &type, 1),
                          ot_is_float(dt) ? ot_fld_f32("value", &fv)
                                          : ot_fld_i32("value", &iv, 1)};
        prt_dims d = v == 0   ? D3(3, 1, 17)
                     : v == 1 ? D0()
                     : v == 2 ? D3(2, 0, 5)
                              : D3(33, 1, 129);
        char tag[96], ds[48];
        k.f = f;
        k.nf = v == 2 ? 1 : 2;
        k.in[0] = ints(PRT_INT64, d.nb_dims, d.d);
        k.role[0] = OC_SHAPE;
        snprintf(tag, sizeof tag, "to %s%s", dstr(&d, ds, sizeof ds),
                 k.nf == 1 ? ", default value" : "");
        run(c, &k, tag);
    }
}

/* start, limit, delta (also shape inputs): up, down, empty both ways, one
 * step past the limit. */
static void gen_range(cov *c, const char *op, int32_t dt)
{
    static const int64_t b[8][3] = {{0, 10, 1}, {3, -7, -2}, {5, 5, 1},   {-4, 100, 7},
                                    {0, 1, 1},  {9, 0, -3},  {2, 40, 13}, {0, 0, -1}};
    for (int v = 0; v < 8; v++) {
        oc_case k = {.op = op, .nb = 3, .exact = 1};
        char tag[48];
        for (int i = 0; i < 3; i++) {
            k.in[i] = scalar_i(dt, D0(), b[v][i]);
            k.role[i] = OC_BOTH;
        }
        snprintf(tag, sizeof tag, "(%lld, %lld, %lld)", (long long)b[v][0],
                 (long long)b[v][1], (long long)b[v][2]);
        run(c, &k, tag);
    }
}

/* k on and off the matrix, the output's dtype another one now and then. */
static void gen_eye_like(cov *c, const char *op, int32_t dt)
{
    static const int32_t ks[4] = {0, -1, 2, 9};
    for (int v = 0; v < 4; v++) {
        oc_case k = {.op = op, .nb = 1, .exact = 1};
        int32_t to = (dt + 3 + v) % PRT_DTYPE_COUNT;
        prt_field f[2] = {ot_fld_i32("k", &ks[v], 1), ot_fld_i32("dtype", &to, 1)};
        if (cov_device(c) != PRT_DEVICE_CPU && cov_dtype_wide(to))
            to = PRT_FLOAT32; /* no device kernel makes the wide types */
        char tag[48];
        k.f = f;
        k.nf = v == 2 ? 2 : 1;
        k.in[0] = cov_random(c, dt, cov_dims(c, 2, 1), 1);
        snprintf(tag, sizeof tag, "k %d%s%s", (int)ks[v], k.nf == 2 ? " to " : "",
                 k.nf == 2 ? prt_dtype_name(to) : "");
        run(c, &k, tag);
    }
}

/* upper and lower, k absent or an input (0-D or one element, int32 or
 * int64, on and far off the matrices). */
static void gen_trilu(cov *c, const char *op, int32_t dt)
{
    static const int64_t ks[6] = {0, -1, 2, -100, 100, 0};
    for (int v = 0; v < 6; v++) {
        oc_case k = {.op = op, .nb = v ? 2 : 1, .exact = 1};
        int32_t upper = v & 1;
        prt_field f = ot_fld_i32("upper", &upper, 1);
        char tag[48];
        k.f = &f;
        k.nf = v != 5;
        k.in[0] = cov_random(c, dt, cov_dims(c, (int32_t)rnd(c, 2, 4), 1), 1);
        if (v) {
            k.in[1] = scalar_i(index_dtype(v / 2), v % 3 ? D0() : D1(1), ks[v]);
            k.role[1] = v == 4 ? OC_CONST : OC_DATA;
        }
        snprintf(tag, sizeof tag, "upper %d k %lld", k.nf ? (int)upper : 1,
                 (long long)ks[v]);
        run(c, &k, tag);
    }
}

/* The cell's dtype is the indices': in range, negative, out of range (a
 * row of off), floats truncated; values of several dtypes; depth as a
 * shape input (0-D or one element) or a field; every axis. */
static void gen_one_hot(cov *c, const char *op, int32_t dt)
{
    static const int32_t vdts[4] = {-1, PRT_FLOAT32, PRT_INT64, PRT_BOOL};
    for (int v = 0; v < 4; v++) {
        oc_case k = {.op = op, .nb = 2, .exact = 1};
        int32_t r = v, axis = (int32_t)rnd(c, -(r + 1), r);
        int64_t depth = rnd(c, 1, 6);
        prt_field f[2] = {ot_fld_i32("axis", &axis, 1),
                          {"depth", &depth, PRT_FIELD_INT64, 1}};
        char tag[48];
        k.in[0] = ot_make(dt, cov_dims(c, r, 1));
        for (int64_t i = 0; i < tu_volume(&k.in[0].dims); i++) {
            double x = dt == PRT_BOOL    ? (double)rnd(c, 0, 1)
                       : dt == PRT_UINT8 ? (double)rnd(c, 0, depth + 1)
                                         : (double)rnd(c, -depth - 1, depth);
            if (ot_is_float(dt) && rnd(c, 0, 1))
                x += x < 0 ? -0.5 : 0.5;
            ot_set(&k.in[0], i, x);
        }
        k.in[1] = ot_random(vdts[v] < 0 ? dt : vdts[v], D1(2), cov_rng(c), 0);
        k.f = f;
        k.nf = 1 + (v % 2);
        if (v % 2 == 0) {
            k.in[2] = scalar_i(index_dtype(v / 2), v ? D1(1) : D0(), depth);
            k.role[2] = OC_SHAPE;
            k.nb = 3;
        }
        snprintf(tag, sizeof tag, "axis %d depth %lld %s, values %s", (int)axis,
                 (long long)depth, k.nb == 3 ? "input" : "field",
                 prt_dtype_name(k.in[1].dtype));
        run(c, &k, tag);
    }
}

/* ---- DepthToSpace, SpaceToDepth, Hardmax ------------------------------------- */

/* Block sizes 1 to 3, DepthToSpace's modes DCR (the default) and CRD. */
static void gen_depth_space(cov *c, const char *op, int32_t dt)
{
    const int d2s = !strcmp(op, "DepthToSpace");
    for (int v = 0; v < 4; v++) {
        oc_case k = {.op = op, .nb = 1, .exact = 1};
        int32_t b = (int32_t)rnd(c, 1, 3);
        prt_field f[2] = {ot_fld_i32("blocksize", &b, 1),
                          ot_fld_str("mode", v & 1 ? "CRD" : "DCR")};
        prt_dims d = cov_dims(c, 4, 1);
        char tag[32];
        if (d2s)
            d.d[1] = b * b * rnd(c, 1, 3);
        else
            d.d[2] *= b, d.d[3] *= b;
        k.f = f;
        k.nf = d2s && v ? 2 : 1;
        k.in[0] = cov_random(c, dt, d, 1);
        snprintf(tag, sizeof tag, "blocksize %d%s%s", (int)b, k.nf == 2 ? " " : "",
                 k.nf == 2 ? (v & 1 ? "CRD" : "DCR") : "");
        run(c, &k, tag);
    }
}

/* Rows with ties and NaN (the first wins, NaN above all); opset 13's rule
 * and coerce_2d's, every axis and the defaults. */
static void gen_hardmax(cov *c, const char *op, int32_t dt)
{
    static const double vals[4] = {-1, 0, 0.5, 1};
    for (int v = 0; v < 6; v++) {
        oc_case k = {.op = op, .nb = 1, .exact = 1};
        int32_t rank = (int32_t)rnd(c, v == 1 ? 2 : 1, 4), ax;
        int32_t axis = rand_axis(c, rank, &ax), coerce = v & 1;
        prt_field f[2] = {ot_fld_i32("coerce_2d", &coerce, 1),
                          ot_fld_i32("axis", &axis, 1)};
        char tag[48];
        k.in[0] = cov_random(c, dt, cov_dims(c, rank, 1), 1);
        for (int64_t i = 0; i < tu_volume(&k.in[0].dims); i++)
            if (rnd(c, 0, 1))
                ot_set(&k.in[0], i, vals[rnd(c, 0, 3)]);
        k.f = f;
        k.nf = v == 0 ? 0 : v == 1 ? 1 : 2;
        snprintf(tag, sizeof tag, "coerce_2d %d, axis %d", (int)coerce,
                 k.nf == 2 ? (int)axis
                 : v == 1  ? 1
                           : -1);
        run(c, &k, tag);
    }
}

/* ---- data-dependent: NonZero, Compress, Unique -------------------------------- */

/* Ranks 0 to 4 with a third of zeros (-0 among them, NaN counting as
 * non-zero), an empty input, all zeros; the count K marked too. */
static void gen_nonzero(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 6; v++) {
        oc_case k = {.op = op, .nb = 1, .nb_out = 2, .exact = 1};
        k.in[0] = cov_random(c, dt, cov_dims(c, v < 5 ? v : 3, 1), 1);
        for (int64_t i = 0; i < tu_volume(&k.in[0].dims); i++)
            if (v == 5 || rnd(c, 0, 2) == 0)
                ot_set(&k.in[0], i, rnd(c, 0, 1) ? 0.0 : -0.0);
        run(c, &k, v == 5 ? "all zero" : "");
    }
}

/* Flattened or along an axis (negative too); a condition shorter than the
 * axis, or longer with false past its end; a network input or a
 * constant. */
static void gen_compress(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 5; v++) {
        oc_case k = {.op = op, .nb = 2, .nb_out = 2, .exact = 1};
        int32_t rank = (int32_t)rnd(c, 1, 3), ax, axis = rand_axis(c, rank, &ax);
        prt_field f = ot_fld_i32("axis", &axis, 1);
        prt_dims d = cov_dims(c, rank, 1);
        int64_t len = v == 0 ? tu_volume(&d) : d.d[ax], n = rnd(c, 0, len);
        char tag[48];
        if (v == 3)
            n = len + 2;
        k.in[0] = cov_random(c, dt, d, 1);
        k.in[1] = ot_make(PRT_BOOL, D1(n));
        for (int64_t i = 0; i < n; i++)
            ot_set(&k.in[1], i, i < len && rnd(c, 0, 2) != 0);
        k.role[1] = v == 4 ? OC_CONST : OC_DATA;
        if (v) {
            k.f = &f;
            k.nf = 1;
        }
        if (v)
            snprintf(tag, sizeof tag, "axis %d, condition of %lld", (int)axis,
                     (long long)n);
        else
            snprintf(tag, sizeof tag, "flattened, condition of %lld", (long long)n);
        run(c, &k, tag);
    }
}

/* Few distinct values (and NaN, 0 and -0 for floats), an item repeated on
 * purpose; flattened or along an axis, sorted or in order of first
 * occurrence; all five outputs. */
static void gen_unique(cov *c, const char *op, int32_t dt)
{
    static const double fvals[4] = {NAN, 0.0, -0.0, 0.5};
    for (int v = 0; v < 5; v++) {
        oc_case k = {.op = op, .nb = 1, .nb_out = 5, .exact = 1};
        int32_t rank = (int32_t)rnd(c, 1, 3), ax, axis = rand_axis(c, rank, &ax);
        int32_t sorted = v & 1;
        prt_field f[2] = {ot_fld_i32("sorted", &sorted, 1), ot_fld_i32("axis", &axis, 1)};
        prt_dims d = cov_dims(c, rank, v == 4);
        int64_t m = v < 2 ? tu_volume(&d) : d.d[ax], outer = 1, inner = 1;
        char tag[48];
        k.in[0] = ot_make(dt, d);
        for (int64_t i = 0; i < tu_volume(&d); i++)
            ot_set(&k.in[0], i,
                   ot_is_float(dt) && rnd(c, 0, 2) == 0 ? fvals[rnd(c, 0, 3)]
                                                        : (double)rnd(c, 0, 2));
        if (v >= 2) {
            for (int32_t i = 0; i < rank; i++)
                if (i < ax)
                    outer *= d.d[i];
                else if (i > ax)
                    inner *= d.d[i];
        }
        for (int64_t p = 0; m > 1 && p < outer; p++) /* item m-1 repeats item 0 */
            for (int64_t q = 0; q < inner; q++)
                ot_set(&k.in[0], (p * m + m - 1) * inner + q,
                       ot_get(&k.in[0], p * m * inner + q));
        k.f = f;
        k.nf = v == 0 ? 0 : v < 2 ? 1 : 2;
        snprintf(tag, sizeof tag, "sorted %d, %s%d", v == 0 ? 1 : (int)sorted,
                 v < 2 ? "flattened " : "axis ", v < 2 ? 0 : (int)axis);
        run(c, &k, tag);
    }
}

/* NonMaxSuppression: boxes of either format on a small field (overlaps,
 * ties from scores in eighths), max_output, iou and score thresholds as
 * inputs (the last absent every other case), no boxes at all; many boxes
 * and selections (CUDA's masks span words); NaN, 0 and -0 scores without a
 * threshold. */
static void gen_nms(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 8; v++) {
        const int64_t B = rnd(c, 1, 2), C = rnd(c, 1, 3);
        const int64_t N = v == 5 ? 0 : v == 6 ? rnd(c, 60, 140) : rnd(c, 1, 12);
        int32_t center = v % 2;
        prt_field f = ot_fld_i32("center_point_box", &center, 1);
        oc_case k = {
            .op = op, .f = &f, .nf = 1, .nb = v % 2 ? 4 : 5, .nb_out = 2, .exact = 1};
        k.in[0] = ot_make(dt, D3(B, N, 4));
        k.in[1] = ot_make(dt, D3(B, C, N));
        for (int64_t i = 0; i < B * N * 4; i++)
            ot_set(&k.in[0], i, (double)rnd(c, 0, 16) / 4.0 + (i % 4 > 1 && center));
        for (int64_t i = 0; i < B * C * N; i++)
            ot_set(&k.in[1], i, (double)rnd(c, 0, 8) / 8.0);
        if (v == 7)
            for (int64_t i = 0; i < B * C * N; i += 3)
                ot_set(&k.in[1], i, i % 2 ? NAN : i % 4 ? 0.0 : -0.0);
        k.in[2] = ot_make(PRT_INT64, D1(1));
        ot_set(&k.in[2], 0, v == 6 ? 50.0 : (double)rnd(c, 0, 5));
        k.in[3] = ot_make(PRT_FLOAT32, D1(1));
        ot_set(&k.in[3], 0, (double)rnd(c, 0, 4) / 4.0);
        if (k.nb == 5) {
            k.in[4] = ot_make(PRT_FLOAT32, D1(1));
            ot_set(&k.in[4], 0, 0.25);
        }
        run(c, &k,
            v == 6   ? "many boxes"
            : v == 7 ? "NaN, 0 and -0 scores"
            : center ? "center boxes"
                     : "corner boxes");
    }
}

/* TfIdfVectorizer: a pool of 1-, 2- and 3-grams over a small alphabet
 * (columns shared and one left empty), X [N, C] or [C] of its letters
 * with empty rows now and then, each mode (weights with IDF and TFIDF),
 * min_gram_length 1 and 2, skips 0 to 3. */
static void gen_tfidf(cov *c, const char *op, int32_t dt)
{
    static const int64_t counts[3] = {0, 3, 7}, indexes[7] = {0, 1, 2, 3, 0, 4, 6};
    static const int64_t pool[13] = {1, 2, 3, 1, 2, 2, 1, 1, 2, 3, 3, 3, 3};
    static const float w[7] = {0.5f, 1, 2, 3, 4, 5, 6};
    static const char *const modes[3] = {"TF", "IDF", "TFIDF"};
    for (int v = 0; v < 6; v++) {
        int32_t mn = 1 + v % 2, mx = 3, sk = (int32_t)rnd(c, 0, 3);
        prt_field f[8] = {ot_fld_i32("min_gram_length", &mn, 1),
                          ot_fld_i32("max_gram_length", &mx, 1),
                          ot_fld_i32("max_skip_count", &sk, 1),
                          ot_fld_str("mode", modes[v % 3]),
                          {"ngram_counts", counts, PRT_FIELD_INT64, 3},
                          {"ngram_indexes", indexes, PRT_FIELD_INT64, 7},
                          {"pool_int64s", pool, PRT_FIELD_INT64, 13},
                          {"weights", w, PRT_FIELD_FLOAT32, 7}};
        oc_case k = {.op = op, .f = f, .nf = v % 3 ? 8 : 7, .nb = 1, .exact = 1};
        prt_dims d =
            v < 4 ? D2(rnd(c, 1, 9), rnd(c, v == 3 ? 0 : 1, 30)) : D1(rnd(c, 1, 30));
        k.in[0] = ot_make(dt, d);
        for (int64_t i = 0; i < tu_volume(&d); i++)
            ot_set(&k.in[0], i, (double)rnd(c, 0, 4));
        run(c, &k, modes[v % 3]);
    }
}

const cov_entry cov_data_entries[] = {
    {"Transpose", gen_transpose},
    {"Flatten", gen_flatten},
    {"Reshape", gen_reshape},
    {"Unsqueeze", gen_squeeze},
    {"Squeeze", gen_squeeze},
    {"Shape", gen_shape},
    {"Size", gen_shape},
    {"Gather", gen_gather},
    {"GatherElements", gen_gather_elements},
    {"GatherND", gen_gather_nd},
    {"ScatterND", gen_scatter_nd},
    {"ScatterElements", gen_scatter_elements},
    {"Concat", gen_concat},
    {"Split", gen_split},
    {"Slice", gen_slice},
    {"Tile", gen_tile},
    {"Pad", gen_pad},
    {"Expand", gen_expand},
    {"ConstantOfShape", gen_constant_of_shape},
    {"Range", gen_range},
    {"EyeLike", gen_eye_like},
    {"Trilu", gen_trilu},
    {"OneHot", gen_one_hot},
    {"DepthToSpace", gen_depth_space},
    {"SpaceToDepth", gen_depth_space},
    {"Hardmax", gen_hardmax},
    {"NonZero", gen_nonzero},
    {"Compress", gen_compress},
    {"Unique", gen_unique},
    {"NonMaxSuppression", gen_nms},
    {"TfIdfVectorizer", gen_tfidf},
    {NULL, NULL},
};
