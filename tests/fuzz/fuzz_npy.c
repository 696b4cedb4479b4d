/*
 * libFuzzer harness: .npy bytes through npy_parse (tools/npy.c), the reader
 * behind `plugrt run --input`. Any input must end in 0 with an array whose
 * nbytes matches its dims and dtype, or -1 with a message: no crash, no
 * leak, no read past the bytes given.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npy_array a;
    char err[512];
    /* libFuzzer hands over an exact-size heap copy: ASan sees any read past
     * its end. */
    memset(&a, 0, sizeof a);
    err[0] = '\0';
    if (npy_parse("fuzz.npy", data, size, &a, err, sizeof err) == 0) {
        int64_t vol = npy_volume(&a.dims);
        size_t item = prt_dtype_size(a.dtype);
        /* The contract of a successful read, checked on every input. */
        if (vol < 0 || item == 0 || a.nbytes != (size_t)vol * item ||
            (a.nbytes && !a.data))
            abort();
        if (a.nbytes)
            memset(a.data, 0, a.nbytes); /* every byte claimed is writable */
        npy_array_free(&a);
    } else if (err[0] == '\0') {
        abort(); /* an error must say what is wrong */
    }
    return 0;
}
