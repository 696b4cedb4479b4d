/*
 * Internal foundation shared by every module: errors, logging, allocation
 * (with fault injection for tests), dtypes, half floats, hashing and
 * bounds-checked byte buffers. Nothing here is exported except the prt_
 * functions declared in plugrt.h.
 */
#ifndef PLUGRT_BASE_H
#define PLUGRT_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "plugrt/plugrt.h"

#if defined(__GNUC__)
#define BASE_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define BASE_PRINTF(a, b)
#endif

/* A table entry that a plugin's table covers (its struct_size reaches past
 * it), or NULL: tables only grow, so an older plugin's table is shorter and
 * its missing entries read as absent. */
#define BASE_END_OF(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))
#define BASE_ENTRY(table, type, member)                                                  \
    (((table) && (table)->struct_size >= BASE_END_OF(type, member)) ? (table)->member    \
                                                                    : NULL)

/* Records the calling thread's error and returns `status`, so callers write
 * `return base_error(PRT_ERR_SHAPE, "...", ...);`. */
prt_status base_error(prt_status status, const char *fmt, ...) BASE_PRINTF(2, 3);
/* Prefixes the current message with "<prefix>: " (keeps the status). */
prt_status base_error_prefix(prt_status status, const char *fmt, ...) BASE_PRINTF(2, 3);
/* Clears the calling thread's error. */
void base_clear_error(void);
/* Records `message` as the calling thread's error as it stands (escaped
 * like every message, not a format): what a plugin reports through the
 * host's set_error. */
void base_set_error_text(const char *message);

void base_log(int32_t severity, const char *fmt, ...) BASE_PRINTF(2, 3);

/* Allocation. Every allocation in the library goes through these, so tests can
 * make the N-th one fail (base_fail_alloc_after). base_malloc(0) returns a
 * valid pointer. They do not set an error; callers do. */
void *base_malloc(size_t n);
void *base_calloc(size_t count, size_t size);
void *base_realloc(void *p, size_t n);
void base_free(void *p);
char *base_strdup(const char *s);
/* `n` bytes aligned to `align` (a power of two, >= sizeof(void *)), freed
 * with base_aligned_free; counted by the failure injection like the rest. */
void *base_aligned_alloc(size_t align, size_t n);
void base_aligned_free(void *p);
/* Test hook: the allocation after `n` more succeed fails; -1 disables. */
void base_fail_alloc_after(int64_t n);

/* The check every query filling a caller's struct makes (plugrt.h: query
 * structs open with struct_size): out non-NULL and its struct_size at
 * least `size`, this library's sizeof. PRT_ERR_INVALID_ARGUMENT naming the
 * function and the struct otherwise. */
prt_status base_query_check(uint32_t struct_size, size_t size, const void *out,
                            const char *fn, const char *type);

/* a * b with overflow check: 0 on overflow, else 1 and *out set. */
int base_mul_i64(int64_t a, int64_t b, int64_t *out);
int base_add_i64(int64_t a, int64_t b, int64_t *out);

/* A float32 shape input's values (prt_float_shape_value): the order key of
 * a float, |bits| with the float's sign, so that keys compare as their
 * floats do (-0 and +0 are key 0). base_key_f32 inverts it; a key beyond
 * infinity's reads NaN. */
int64_t base_f32_key(float v);
float base_key_f32(int64_t key);
/* floor(d * s) exactly (s = m 2^e, so no rounding before the floor):
 * 0 for a NaN or infinite s or an overflow, else 1 and *out set. */
int base_floor_mul_f32(int64_t d, float s, int64_t *out);

/* Element count of dims (1 for rank 0); -1 if a dim is negative or the product
 * overflows. */
int64_t base_volume(const prt_dims *dims);
/* The two spellings of dims in text, from one formatter:
 *   BASE_DIMS_X     "1x3x224x224": shape messages and the program's
 *                   NAME:DIMS syntax; rank 0 reads "scalar", a rank out of
 *                   range "(rank N)".
 *   BASE_DIMS_LIST  "[1, 3, 224, 224]": op messages; rank 0 and a rank out
 *                   of range read "[]". */
enum { BASE_DIMS_X, BASE_DIMS_LIST };
/* A dim value that reads "?": a symbolic dim, in messages about
 * expressions. */
#define BASE_DIM_UNKNOWN INT64_MIN
/* Writes dims in `style` into buf and returns buf; text that does not fit
 * in cap bytes is cut short, still terminated. */
const char *base_dims_format(const prt_dims *dims, int32_t style, char *buf, size_t cap);
/* base_dims_format in BASE_DIMS_X. */
void base_dims_str(const prt_dims *dims, char *buf, size_t cap);

/* Bytes of one element of a prt_field_type (sizeof(prt_dims) for DIMS); 0
 * for an invalid type. */
size_t base_field_type_size(int32_t type);
/* "int32", "float32", "char", ...; "invalid" for an unknown value. */
const char *base_field_type_name(int32_t type);

/* Edit distance of two short names, case-insensitive, capped at 9: the
 * "did you mean" of importer and registry errors. */
int base_name_distance(const char *a, const char *b);

uint64_t base_fnv1a64(const void *data, size_t n, uint64_t seed);
#define BASE_FNV_SEED 0xcbf29ce484222325ull
uint32_t base_crc32(const void *data, size_t n);

/* Opens `path` for reading only if it is a regular file: the open cannot
 * block (O_NONBLOCK: a FIFO would wait for a writer forever) and the type is
 * checked on the opened descriptor, so what is checked is what is read.
 * Returns 0 with *out_fd (the caller closes it) and *out_size; else the
 * errno of a failed open or fstat (ENOENT: no such file), or -1 for a file
 * that is not regular, with *why saying what is wrong ("No such file or
 * directory", "it is a directory, not a regular file", ...). */
int base_open_regular(const char *path, int *out_fd, uint64_t *out_size,
                      const char **why);
/* Reads n bytes at `offset` (pread, retried); fewer only where the file
 * ends. The count read, or -1 on a read error (errno set). */
int64_t base_read_at(int fd, void *buf, size_t n, uint64_t offset);

/* A growing byte buffer for writers. On allocation failure `failed` is set
 * and further appends are ignored; check it once at the end. */
typedef struct base_buf {
    uint8_t *data;
    size_t size;
    size_t cap;
    int failed;
} base_buf;
void base_buf_put(base_buf *b, const void *p, size_t n);
void base_buf_u32(base_buf *b, uint32_t v); /* little-endian */
void base_buf_i32(base_buf *b, int32_t v);
void base_buf_u64(base_buf *b, uint64_t v);
void base_buf_i64(base_buf *b, int64_t v);
void base_buf_str(base_buf *b, const char *s); /* u32 length + bytes */
void base_buf_free(base_buf *b);

/* A bounds-checked reader over untrusted bytes. Any read past the end sets
 * `failed` and yields zeros; check it once per record. */
typedef struct base_reader {
    const uint8_t *data;
    size_t size;
    size_t pos;
    int failed;
} base_reader;
void base_rd_get(base_reader *r, void *p, size_t n);
uint32_t base_rd_u32(base_reader *r);
int32_t base_rd_i32(base_reader *r);
uint64_t base_rd_u64(base_reader *r);
int64_t base_rd_i64(base_reader *r);
/* A borrowed pointer to n bytes inside the reader, or NULL (failed set). */
const uint8_t *base_rd_span(base_reader *r, size_t n);
/* A string as written by base_buf_str, copied (caller frees with base_free);
 * NULL on failure. Rejects embedded NULs and lengths over max_len. */
char *base_rd_str(base_reader *r, size_t max_len);

#endif /* PLUGRT_BASE_H */
