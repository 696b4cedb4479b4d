/*
 * NumPy .npy files: the arrays `plugrt run` reads and writes.
 *
 * Supported: format versions 1.0, 2.0 and 3.0; C order, and Fortran order
 * (converted to C order on read: numpy writes np.argwhere's result that
 * way); little- or big-endian (swapped to the host's order on read); the dtypes plugrt
 * has a name for except bfloat16 (numpy has none): float32 '<f4', float16 '<f2', int8
 * '|i1', uint8 '|u1', int32 '<i4', int64 '<i8' and bool '|b1'. Rank 0 to
 * PRT_MAX_DIMS. Files are written in version 1.0 (a header of rank <= 8 always
 * fits), in the host's byte order, with the header padded to 64 bytes as numpy does.
 *
 * Every file is untrusted: a bad magic, an unparsable or lying header, an
 * unsupported dtype, a data length that is not
 * volume x itemsize (truncated or trailing bytes) is an error whose message
 * names the file and the problem; nothing is read out of bounds.
 */
#ifndef PLUGRT_TOOLS_NPY_H
#define PLUGRT_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "plugrt/plugrt.h"

/* An array in memory: `data` holds volume(dims) elements of dtype, C order,
 * and is owned by whoever filled the struct (npy_read: free with
 * npy_array_free). */
typedef struct npy_array {
    int32_t dtype; /* prt_dtype */
    prt_dims dims;
    void *data;
    size_t nbytes;
} npy_array;

/* Reads `path` into *out. Returns 0, or -1 with a message naming the file
 * and the problem in err (errlen bytes). *out is untouched on failure. */
int npy_read(const char *path, npy_array *out, char *err, size_t errlen);

/* Parses a whole .npy file held in memory; `name` is used in messages. */
int npy_parse(const char *name, const void *bytes, size_t size, npy_array *out, char *err,
              size_t errlen);

/* Writes `nbytes` bytes of `data` (volume(dims) elements of dtype) to path.
 * Returns 0, or -1 with a message in err. */
int npy_write(const char *path, int32_t dtype, const prt_dims *dims, const void *data,
              char *err, size_t errlen);

/* Frees the data of an array filled by npy_read and zeroes it. NULL is fine. */
void npy_array_free(npy_array *a);

/* Number of elements of dims (1 for rank 0); -1 on a negative dim or
 * overflow of int64. */
int64_t npy_volume(const prt_dims *dims);

/* numpy's descr for a dtype ("<f4"), or NULL if numpy has none. */
const char *npy_descr(int32_t dtype);

#endif /* PLUGRT_TOOLS_NPY_H */
