/* Element access across dtypes for the plugrt program: values as doubles
 * (for comparison and printing) and random tensor contents. Half and
 * bfloat16 conversion is plugrt's own (prt_half_to_float, ...). */
#ifndef PLUGRT_TOOLS_NUMERIC_H
#define PLUGRT_TOOLS_NUMERIC_H

#include <stddef.h>
#include <stdint.h>

/* Element i of an array of `dtype` as a double (int64 beyond 2^53 rounds). */
double cli_element(int32_t dtype, const void *data, int64_t i);
/* 1 for integer and bool dtypes; their elements compare exactly. */
int cli_dtype_is_integer(int32_t dtype);
/* Element i of integer/bool data as int64 (exact, unlike cli_element). */
int64_t cli_element_i64(int32_t dtype, const void *data, int64_t i);

/* Fills n elements of dtype from a small xorshift generator: floats uniform
 * in [-1, 1), int8 in [-8, 8), other integers in [0, 16), bool 0 or 1.
 * Deterministic for a given seed. */
void cli_fill_random(int32_t dtype, void *data, int64_t n, uint64_t *state);

#endif /* PLUGRT_TOOLS_NUMERIC_H */
