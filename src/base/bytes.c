/* Little-endian byte buffers and a bounds-checked reader for untrusted
 * bytes (engine files). */
#include <string.h>

#include "base.h"

void base_buf_put(base_buf *b, const void *p, size_t n)
{
    if (b->failed)
        return;
    if (b->size + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        uint8_t *d;
        while (cap < b->size + n)
            cap *= 2;
        d = base_realloc(b->data, cap);
        if (!d) {
            b->failed = 1;
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->size, p, n);
    b->size += n;
}

void base_buf_u32(base_buf *b, uint32_t v)
{
    uint8_t x[4];
    for (int i = 0; i < 4; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    base_buf_put(b, x, 4);
}

void base_buf_i32(base_buf *b, int32_t v)
{
    base_buf_u32(b, (uint32_t)v);
}

void base_buf_u64(base_buf *b, uint64_t v)
{
    uint8_t x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    base_buf_put(b, x, 8);
}

void base_buf_i64(base_buf *b, int64_t v)
{
    base_buf_u64(b, (uint64_t)v);
}

void base_buf_str(base_buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    base_buf_u32(b, (uint32_t)n);
    base_buf_put(b, s, n);
}

void base_buf_free(base_buf *b)
{
    base_free(b->data);
    memset(b, 0, sizeof *b);
}

void base_rd_get(base_reader *r, void *p, size_t n)
{
    if (r->failed || n > r->size - r->pos) {
        r->failed = 1;
        memset(p, 0, n);
        return;
    }
    memcpy(p, r->data + r->pos, n);
    r->pos += n;
}

uint32_t base_rd_u32(base_reader *r)
{
    uint8_t x[4];
    base_rd_get(r, x, 4);
    return (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 |
           (uint32_t)x[3] << 24;
}

int32_t base_rd_i32(base_reader *r)
{
    return (int32_t)base_rd_u32(r);
}

uint64_t base_rd_u64(base_reader *r)
{
    uint64_t lo = base_rd_u32(r);
    uint64_t hi = base_rd_u32(r);
    return lo | hi << 32;
}

int64_t base_rd_i64(base_reader *r)
{
    return (int64_t)base_rd_u64(r);
}

const uint8_t *base_rd_span(base_reader *r, size_t n)
{
    const uint8_t *p;
    if (r->failed || n > r->size - r->pos) {
        r->failed = 1;
        return NULL;
    }
    p = r->data + r->pos;
    r->pos += n;
    return p;
}

char *base_rd_str(base_reader *r, size_t max_len)
{
    uint32_t n = base_rd_u32(r);
    const uint8_t *p;
    char *s;
    if (r->failed || n > max_len) {
        r->failed = 1;
        return NULL;
    }
    p = base_rd_span(r, n);
    if (!p || memchr(p, 0, n)) {
        r->failed = 1;
        return NULL;
    }
    s = base_malloc((size_t)n + 1);
    if (!s)
        return NULL;
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}
