/*
 * The .npy helper of the CLI tests (tools/npy.c).
 *
 *   npy_check write DIR   writes DIR/rt_<dtype>_<case>.npy for every dtype and
 *                         a few shapes, reads each back and compares; the
 *                         test's Python checks numpy reads them the same
 *   npy_check copy IN OUT reads IN and writes it to OUT (numpy-made files
 *                         through our reader and writer)
 *   npy_check read FILE   prints "dtype dims" or the error (exit 1)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

static const int32_t dtypes[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_INT8, PRT_UINT8,
                                 PRT_INT32,   PRT_INT64,   PRT_BOOL};

/* Deterministic contents: element i of a case is a function of i, so the
 * Python side can recompute it (see npy.sh). */
static void fill(int32_t dtype, void *data, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        switch (dtype) {
        case PRT_FLOAT32:
            ((float *)data)[i] = (float)i * 0.5f - 3.0f;
            break;
        case PRT_FLOAT16: {
            /* i * 0.5 - 3 in binary16: exact for the small i used here. */
            float v = (float)i * 0.5f - 3.0f;
            uint32_t bits;
            uint16_t h;
            memcpy(&bits, &v, sizeof bits);
            if (v == 0.0f)
                h = 0;
            else
                h = (uint16_t)(((bits >> 16) & 0x8000u) |
                               ((((bits >> 23) & 0xffu) - 112u) << 10) |
                               ((bits >> 13) & 0x3ffu));
            ((uint16_t *)data)[i] = h;
            break;
        }
        case PRT_INT8:
            ((int8_t *)data)[i] = (int8_t)(i % 200 - 100);
            break;
        case PRT_UINT8:
            ((uint8_t *)data)[i] = (uint8_t)(i * 7 % 256);
            break;
        case PRT_INT32:
            ((int32_t *)data)[i] = (int32_t)(i * 1000003 - 5000);
            break;
        case PRT_INT64:
            ((int64_t *)data)[i] = (int64_t)i * 4000000007LL - 9;
            break;
        case PRT_BOOL:
            ((uint8_t *)data)[i] = (uint8_t)(i % 3 == 0);
            break;
        default:
            break;
        }
    }
}

static int cmd_write(const char *dir)
{
    static const prt_dims shapes[] = {
        {0, {0}}, {1, {5}}, {3, {2, 3, 4}}, {2, {0, 3}}, {4, {1, 2, 1, 3}}};
    static const char *const names[] = {"scalar", "vec", "cube", "empty", "ones"};
    char path[4096], err[1024];
    int bad = 0;
    for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            int32_t dt = dtypes[t];
            int64_t n = npy_volume(&shapes[s]);
            size_t bytes = (size_t)n * prt_dtype_size(dt);
            void *data = calloc(1, bytes + 1);
            npy_array back;
            if (!data)
                return 1;
            fill(dt, data, n);
            snprintf(path, sizeof path, "%s/rt_%s_%s.npy", dir, prt_dtype_name(dt),
                     names[s]);
            if (npy_write(path, dt, &shapes[s], data, err, sizeof err) != 0 ||
                npy_read(path, &back, err, sizeof err) != 0) {
                fprintf(stderr, "%s\n", err);
                free(data);
                return 1;
            }
            if (back.dtype != dt || back.dims.nb_dims != shapes[s].nb_dims ||
                back.nbytes != bytes ||
                memcmp(back.dims.d, shapes[s].d,
                       sizeof(int64_t) * (size_t)shapes[s].nb_dims) ||
                (bytes && memcmp(back.data, data, bytes) != 0)) {
                fprintf(stderr, "%s: read back differs from what was written\n", path);
                bad = 1;
            }
            npy_array_free(&back);
            free(data);
        }
    return bad;
}

static int cmd_copy(const char *in, const char *out)
{
    char err[1024];
    npy_array a;
    if (npy_read(in, &a, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    if (npy_write(out, a.dtype, &a.dims, a.data, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        npy_array_free(&a);
        return 1;
    }
    npy_array_free(&a);
    return 0;
}

static int cmd_read(const char *path)
{
    char err[1024];
    npy_array a;
    if (npy_read(path, &a, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("%s", prt_dtype_name(a.dtype));
    for (int32_t i = 0; i < a.dims.nb_dims; i++)
        printf(" %lld", (long long)a.dims.d[i]);
    putchar('\n');
    npy_array_free(&a);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "write") == 0)
        return cmd_write(argv[2]);
    if (argc == 4 && strcmp(argv[1], "copy") == 0)
        return cmd_copy(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "read") == 0)
        return cmd_read(argv[2]);
    fprintf(stderr, "usage: npy_check write DIR | copy IN OUT | read FILE\n");
    return 2;
}
