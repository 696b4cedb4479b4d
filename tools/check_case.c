/* Cases and their guarded buffers, on the host and the device
 * (check_case.h). */
#include "check_case.h"

#include <stdatomic.h>
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

/* ---- arrays the host hands a plugin -------------------------------------------- */

/* Guard patterns differ per array, and follow from the order arrays are
 * made in (atomic: the threads check makes them on two threads). */
static atomic_uint_fast64_t garr_count;

/* High bit set (check_case.h: what a read past the end finds). */
static unsigned char garr_byte(uint64_t seed, size_t j)
{
    return (unsigned char)(guard_byte(seed, j) | 0x80);
}

static void *guard_array(chk_guards *g, const char *name, const void *src, int32_t count,
                         size_t elem, int out, void *owned)
{
    size_t bytes = count > 0 ? (size_t)count * elem : 0;
    chk_garr *a;
    if (!src)
        return NULL;
    if (g->n == g->cap) {
        int32_t cap = g->cap ? 2 * g->cap : 8;
        chk_garr *more = realloc(g->arr, sizeof *more * (size_t)cap);
        if (!more)
            return (void *)(uintptr_t)src; /* unguarded, as the entry would get it */
        g->arr = more;
        g->cap = cap;
    }
    a = &g->arr[g->n];
    memset(a, 0, sizeof *a);
    a->block = malloc(2 * CHK_GUARD + bytes);
    if (!a->block)
        return (void *)(uintptr_t)src;
    g->n++;
    a->src = (void *)(uintptr_t)src;
    a->bytes = bytes;
    a->elem = elem;
    a->name = name;
    a->out = out;
    a->owned = owned;
    a->seed = atomic_fetch_add(&garr_count, 1) * 0x632be59bd9b4e019ull + 0x5eed;
    for (size_t j = 0; j < CHK_GUARD; j++) {
        a->block[j] = garr_byte(a->seed, j);
        a->block[CHK_GUARD + bytes + j] = garr_byte(a->seed, CHK_GUARD + j);
    }
    memcpy(a->block + CHK_GUARD, src, bytes);
    return a->block + CHK_GUARD;
}

const void *chk_guard_in(chk_guards *g, const char *name, const void *src, int32_t count,
                         size_t elem)
{
    return guard_array(g, name, src, count, elem, 0, NULL);
}

void *chk_guard_out(chk_guards *g, const char *name, void *src, int32_t count,
                    size_t elem)
{
    return guard_array(g, name, src, count, elem, 1, NULL);
}

/* What an entry did to one array: "" when nothing it must not. */
static void garr_problem(const chk_garr *a, const char *entry, char *why, size_t cap)
{
    const unsigned char *data = a->block + CHK_GUARD;
    size_t n = a->elem ? a->bytes / a->elem : 0;
    why[0] = '\0';
    for (size_t j = CHK_GUARD; j-- > 0;)
        if (a->block[j] != garr_byte(a->seed, j)) {
            snprintf(why, cap,
                     "%s wrote byte %lld before the start of its %s array (%zu element%s "
                     "of %zu bytes)",
                     entry, -(long long)(CHK_GUARD - j), a->name, n, n == 1 ? "" : "s",
                     a->elem);
            return;
        }
    for (size_t j = 0; j < CHK_GUARD; j++)
        if (data[a->bytes + j] != garr_byte(a->seed, CHK_GUARD + j)) {
            snprintf(why, cap,
                     "%s wrote byte %zu past the end of its %s array (%zu element%s of "
                     "%zu bytes): element %zu, byte %zu of it",
                     entry, j, a->name, n, n == 1 ? "" : "s", a->elem,
                     n + j / (a->elem ? a->elem : 1), j % (a->elem ? a->elem : 1));
            return;
        }
    if (!a->out && memcmp(data, a->src, a->bytes) != 0) {
        size_t b = 0;
        while (data[b] == ((const unsigned char *)a->src)[b])
            b++;
        snprintf(why, cap,
                 "%s wrote into its %s array, which it may only read (element %zu, byte "
                 "%zu of it)",
                 entry, a->name, b / (a->elem ? a->elem : 1),
                 b % (a->elem ? a->elem : 1));
    }
}

int chk_guards_end(chk_guards *g, const char *entry, char *why, size_t cap)
{
    int rc = 0;
    if (cap)
        why[0] = '\0';
    for (int32_t i = 0; i < g->n; i++) {
        chk_garr *a = &g->arr[i];
        if (rc == 0) {
            garr_problem(a, entry, why, cap);
            rc = why[0] ? -1 : 0;
        }
        if (a->out)
            memcpy(a->src, a->block + CHK_GUARD, a->bytes);
        free(a->block);
        free(a->owned);
    }
    free(g->arr);
    memset(g, 0, sizeof *g);
    return rc;
}

/* Bytes of a field's data when it can be copied, else 0. */
static size_t field_bytes(const prt_field *f)
{
    size_t es = chk_field_type_size(f->type);
    if (!f->data || es == 0 || f->length <= 0 ||
        (uint64_t)f->length > CHK_MAX_BUFFER / es)
        return 0;
    return es * (size_t)f->length;
}

const prt_field_collection *chk_guard_fields(chk_guards *g,
                                             const prt_field_collection *fc)
{
    prt_field *fields;
    prt_field_collection *copy;
    int32_t n;
    if (!fc)
        return NULL;
    n = fc->nb_fields > 0 && fc->fields ? fc->nb_fields : 0;
    fields = malloc(sizeof *fields * (size_t)(n ? n : 1));
    copy = malloc(sizeof *copy);
    if (!fields || !copy) {
        free(fields);
        free(copy);
        return fc;
    }
    for (int32_t i = 0; i < n; i++) {
        const prt_field *f = &fc->fields[i];
        size_t bytes = field_bytes(f);
        size_t len = f->name ? strnlen(f->name, CHK_NAME_MAX) : CHK_NAME_MAX;
        fields[i] = *f;
        if (len < CHK_NAME_MAX) /* a longer one is the abi check's to report */
            fields[i].name = chk_guard_in(g, "field name", f->name, (int32_t)len + 1, 1);
        if (bytes)
            fields[i].data = chk_guard_in(g, "field data", f->data, (int32_t)bytes, 1);
    }
    *copy = *fc;
    copy->fields =
        n ? guard_array(g, "fields", fields, n, sizeof *fields, 0, fields) : fc->fields;
    if (!n)
        free(fields);
    return guard_array(g, "field collection", copy, 1, sizeof *copy, 0, copy);
}
