/* Cases and their guarded buffers, on the host and the device
 * (check_case.h). */
#include "check_case.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHK_ALIGN 256                    /* the runtime's arena alignment */
#define CHK_MAX_BUFFER ((size_t)1 << 26) /* a case's largest buffer, in bytes */

/* ---- guarded buffers --------------------------------------------------------- */

static unsigned char guard_byte(uint64_t seed, size_t j)
{
    uint64_t z = seed + j * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
    return (unsigned char)(z >> 56);
}

static size_t block_bytes(size_t bytes)
{
    return (CHK_GUARD + bytes + CHK_GUARD + CHK_ALIGN - 1) / CHK_ALIGN * CHK_ALIGN;
}

size_t chk_buf_total(const chk_buf *b)
{
    return block_bytes(b->bytes);
}

static size_t tail_bytes(const chk_buf *b)
{
    return block_bytes(b->bytes) - CHK_GUARD - b->bytes;
}

void chk_buf_guard_reset(chk_buf *b)
{
    size_t tail = tail_bytes(b);
    for (size_t j = 0; j < CHK_GUARD; j++)
        b->block[j] = guard_byte(b->seed, j);
    for (size_t j = 0; j < tail; j++)
        b->data[b->bytes + j] = guard_byte(b->seed, CHK_GUARD + j);
}

int64_t chk_buf_guard_check(const chk_buf *b, int *found)
{
    size_t tail = tail_bytes(b);
    *found = 1;
    for (size_t j = 0; j < CHK_GUARD; j++)
        if (b->block[j] != guard_byte(b->seed, j))
            return (int64_t)j - CHK_GUARD;
    for (size_t j = 0; j < tail; j++)
        if (b->data[b->bytes + j] != guard_byte(b->seed, CHK_GUARD + j))
            return (int64_t)(b->bytes + j);
    *found = 0;
    return 0;
}

/* b->dev for b's block. 0, or -1 with why. */
static int dev_alloc(chk_buf *b, char *why, size_t cap)
{
    void *p = NULL;
    if (prt_device_malloc(PRT_DEVICE_CUDA, chk_buf_total(b), &p) != PRT_OK)
        return chk_say(why, cap, "device memory for a buffer of %zu bytes: %s", b->bytes,
                       prt_last_error());
    b->dev = p;
    return 0;
}

static void dev_free(chk_buf *b)
{
    if (b->dev)
        prt_device_free(PRT_DEVICE_CUDA, b->dev);
    b->dev = NULL;
}

/* A host block and, on CUDA, its device twin. 0, or -1 with L->why. */
static int buf_alloc(chk_layer *L, chk_buf *b, size_t bytes, uint64_t seed)
{
    b->block = aligned_alloc(CHK_ALIGN, block_bytes(bytes));
    if (!b->block)
        return chk_say(L->why, sizeof L->why, "out of memory (%zu bytes)", bytes);
    b->data = b->block + CHK_GUARD;
    b->bytes = bytes;
    b->seed = seed;
    chk_buf_guard_reset(b);
    if (L->c->device == PRT_DEVICE_CUDA)
        return dev_alloc(b, L->why, sizeof L->why);
    return 0;
}

static void buf_free(chk_buf *b)
{
    free(b->block);
    dev_free(b);
    memset(b, 0, sizeof *b);
}

/* ---- input data -------------------------------------------------------------- */

static void fill_random(int32_t dtype, void *data, int64_t n, chk_rng *r, int sparse)
{
    for (int64_t i = 0; i < n; i++) {
        int zero = sparse && chk_rand(r) % 3 == 0;
        double u = (double)(chk_rand(r) >> 11) / 9007199254740992.0;
        float f = zero ? 0.0f : (float)((0.25 + 1.75 * u) * (chk_rand(r) & 1 ? -1 : 1));
        int64_t v = zero ? 0 : (int64_t)chk_rand_range(r, 1, 4);
        switch (dtype) {
        case PRT_FLOAT32:
            ((float *)data)[i] = f;
            break;
        case PRT_FLOAT16:
            ((uint16_t *)data)[i] = prt_float_to_half(f);
            break;
        case PRT_BFLOAT16:
            ((uint16_t *)data)[i] = prt_float_to_bf16(f);
            break;
        case PRT_INT8:
            ((int8_t *)data)[i] = (int8_t)v;
            break;
        case PRT_UINT8:
            ((uint8_t *)data)[i] = (uint8_t)v;
            break;
        case PRT_INT32:
            ((int32_t *)data)[i] = (int32_t)v;
            break;
        case PRT_INT64:
            ((int64_t *)data)[i] = v;
            break;
        default: /* bool: true, or random with sparse */
            ((uint8_t *)data)[i] = (uint8_t)(sparse ? chk_rand(r) & 1 : 1);
        }
    }
}

/* ---- cases ------------------------------------------------------------------- */

int64_t chk_volume(const prt_dims *d)
{
    int64_t v = 1;
    for (int32_t k = 0; k < d->nb_dims; k++)
        if (__builtin_mul_overflow(v, d->d[k], &v) || d->d[k] < 0)
            return -1;
    return v;
}

static int buffer_bytes(chk_layer *L, int32_t dtype, const prt_dims *d, size_t *out)
{
    int64_t v = chk_volume(d);
    if (v < 0 || (uint64_t)v > CHK_MAX_BUFFER / prt_dtype_size(dtype)) {
        snprintf(L->why, sizeof L->why, "a tensor of %lld elements is too large to check",
                 (long long)v);
        return -1;
    }
    *out = (size_t)v * prt_dtype_size(dtype);
    return 0;
}

int chk_case_init(chk_case *k, chk_layer *L, const prt_dims *in_dims, chk_rng *r,
                  int sparse)
{
    chk_env env = chk_layer_env(L, in_dims, NULL);
    memset(k, 0, sizeof *k);
    k->L = L;
    memcpy(k->in_dims, in_dims, sizeof(prt_dims) * (size_t)(L->nb_in + L->sig.nb_shape));
    chk_shape_str(L, in_dims, k->shape, sizeof k->shape);
    if (chk_layer_out_dims(L, in_dims, NULL, k->out_dims) != 0)
        return -1;
    for (int32_t o = 0; o < L->nb_out; o++)
        k->upper[o] = -1;
    for (int32_t s = 0; s < chk_pool_size_count(L->pool); s++) {
        char why[256];
        int32_t o = chk_pool_size_output(L->pool, s);
        if (chk_pool_eval(L->pool, &env, chk_pool_size_upper(L->pool, s), &k->upper[o],
                          why, sizeof why)) {
            snprintf(L->why, sizeof L->why, "the upper bound of output %d: %s", (int)o,
                     why);
            return -1;
        }
    }
    for (int32_t i = 0; i < L->nb_in; i++) {
        size_t bytes;
        if (buffer_bytes(L, L->sig.types[i], &in_dims[i], &bytes) ||
            buf_alloc(L, &k->in[i], bytes, chk_rand(r)))
            return -1;
        if (!(k->in_ref[i] = malloc(bytes ? bytes : 1)))
            return chk_say(L->why, sizeof L->why, "out of memory");
        fill_random(L->sig.types[i], k->in_ref[i], chk_volume(&in_dims[i]), r, sparse);
    }
    for (int32_t o = 0; o < L->nb_out; o++) {
        size_t bytes;
        if (buffer_bytes(L, L->out_types[o], &k->out_dims[o], &bytes) ||
            buf_alloc(L, &k->out[o], bytes, chk_rand(r)))
            return -1;
    }
    if ((uint64_t)L->workspace > CHK_MAX_BUFFER)
        return chk_say(L->why, sizeof L->why, "a workspace of %lld bytes is too large",
                       (long long)L->workspace);
    return buf_alloc(L, &k->ws, (size_t)L->workspace, chk_rand(r));
}

void chk_case_free(chk_case *k)
{
    if (!k->L)
        return;
    for (int32_t i = 0; i < k->L->nb_in; i++) {
        buf_free(&k->in[i]);
        free(k->in_ref[i]);
    }
    for (int32_t o = 0; o < k->L->nb_out; o++)
        buf_free(&k->out[o]);
    buf_free(&k->ws);
    memset(k, 0, sizeof *k);
}
