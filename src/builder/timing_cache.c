/*
 * The timing cache (prt_builder_config_set_timing_cache_file): the choices
 * autotuning made, so later builds of the same layers on the same device
 * skip timing, and the code NVRTC compiled from kernel source, so they
 * skip compiling.
 *
 * File, little-endian, validated like an engine file (magic, version, then
 * a CRC-32 of everything before it, bounded reads):
 *   u8[8] "PLUGRTTC", u32 version (1 or 2), u32 entry count, per entry:
 *     str key (what the choice depends on, as text: device, compute
 *         capability, plugin key, a hash of its fields, every position's
 *         dtype and min/opt/max dims),
 *     i32 tactic, u32 position count (<= 128), i32 format per position;
 *   version 2 only: u32 code entry count, per entry:
 *     str key (kernel_nvrtc_compile_cached's: NVRTC version, arch, hashes
 *         of the source and options),
 *     u64 FNV-1a of the codes' bytes below, u32 code count (1 or 2), per
 *     code: i32 kind (cubin first, then PTX), i32 arch, u32 size
 *     (1..TC_MAX_CODE), the bytes;
 *   u32 CRC-32.
 * A string is a u32 byte count and the bytes (no NUL), at most 4096 bytes.
 * A cache without code is written as version 1, so an older plugrt still
 * reads it; this one reads both. An entry whose hash disagrees is dropped
 * with a warning, and code taken from the cache is checked like fresh code
 * before it is used (kernel_nvrtc_compile_cached, kernel_from_desc).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "builder/builder.h"

#define TC_MAGIC "PLUGRTTC"
#define TC_VERSION 2u
#define TC_VERSION_TACTICS 1u /* no code entries */
#define TC_MAX_CODE ((uint32_t)1 << 28)
#define TC_MAX_KEY 4096
#define TC_MAX_ENTRIES (1 << 20)

void tc_free(tc_cache *c)
{
    for (int32_t i = 0; i < c->nb; i++)
        base_free(c->entries[i].key);
    base_free(c->entries);
    for (int32_t i = 0; i < c->nb_code; i++) {
        base_free(c->code[i].key);
        base_free(c->code[i].cubin.data);
        base_free(c->code[i].ptx.data);
    }
    base_free(c->code);
    memset(c, 0, sizeof *c);
}

static prt_status bad(const char *path, const char *what)
{
    return base_error(PRT_ERR_MALFORMED,
                      "timing cache '%s' is not a valid plugrt timing "
                      "cache: %s",
                      path, what);
}

/* Room for one more of `elem` bytes in *items (nb used, *cap allocated). */
static prt_status grow(void **items, int32_t nb, int32_t *cap, size_t elem)
{
    if (nb == *cap) {
        int32_t n = *cap ? *cap * 2 : 16;
        void *grown = base_realloc(*items, elem * (size_t)n);
        if (!grown)
            return base_error(PRT_ERR_OUT_OF_MEMORY, "timing cache: out of memory");
        *items = grown;
        *cap = n;
    }
    return PRT_OK;
}

static prt_status tc_add(tc_cache *c, char *key, int32_t tactic, int32_t n,
                         const int32_t *formats)
{
    tc_entry *e;
    void *items = c->entries;
    prt_status st = grow(&items, c->nb, &c->cap, sizeof *e);
    c->entries = items;
    if (st)
        return st;
    e = &c->entries[c->nb++];
    memset(e, 0, sizeof *e);
    e->key = key;
    e->tactic = tactic;
    e->nb_formats = n;
    memcpy(e->formats, formats, sizeof(int32_t) * (size_t)n);
    return PRT_OK;
}

/* Why entry i's key, at `at` in r, did not read (base_rd_str says only
 * that it failed). */
static prt_status bad_key(const char *path, const base_reader *r, size_t at, uint32_t i)
{
    base_reader k = {r->data, r->size, at, 0};
    uint32_t n = base_rd_u32(&k);
    const uint8_t *key = k.failed || n > TC_MAX_KEY ? NULL : base_rd_span(&k, n);
    const uint8_t *nul = key ? memchr(key, 0, n) : NULL;
    char what[96];
    if (!k.failed && n > TC_MAX_KEY)
        snprintf(what, sizeof what, "entry %u has a key of %u bytes (at most %d)",
                 (unsigned)i, (unsigned)n, TC_MAX_KEY);
    else if (!key)
        snprintf(what, sizeof what, "truncated entry (%u)", (unsigned)i);
    else if (nul)
        snprintf(what, sizeof what,
                 "entry %u: its key holds a NUL byte (at key byte %zu)", (unsigned)i,
                 (size_t)(nul - key));
    else
        return base_error(PRT_ERR_OUT_OF_MEMORY, "timing cache: out of memory");
    return bad(path, what);
}

static uint64_t code_hash(const tc_code *e)
{
    uint64_t h = base_fnv1a64(e->cubin.data, (size_t)e->cubin.size, 0);
    return e->ptx.size > 0 ? base_fnv1a64(e->ptx.data, (size_t)e->ptx.size, h) : h;
}

/* Room for one more code entry, zeroed (not counted yet). */
static prt_status code_grow(tc_cache *c)
{
    void *items = c->code;
    prt_status st = grow(&items, c->nb_code, &c->cap_code, sizeof *c->code);
    c->code = items;
    if (!st)
        memset(&c->code[c->nb_code], 0, sizeof c->code[0]);
    return st;
}

/* One code of a code entry: cubin first, then PTX. */
static prt_status read_code(base_reader *r, const char *path, uint32_t i, uint32_t k,
                            eng_kernel_code *out)
{
    char what[96];
    const uint8_t *bytes;
    uint32_t size;
    out->kind = base_rd_i32(r);
    out->arch = base_rd_i32(r);
    size = base_rd_u32(r);
    bytes = r->failed || size == 0 || size > TC_MAX_CODE ? NULL : base_rd_span(r, size);
    if (!bytes) {
        snprintf(what, sizeof what, "code entry %u: code %u is truncated or of %u bytes",
                 (unsigned)i, (unsigned)k, (unsigned)size);
        return bad(path, what);
    }
    if (out->kind != (k == 0 ? PRT_KERNEL_CUBIN : PRT_KERNEL_PTX)) {
        snprintf(what, sizeof what, "code entry %u: code %u has kind %d", (unsigned)i,
                 (unsigned)k, (int)out->kind);
        return bad(path, what);
    }
    /* NUL after the bytes: PTX loads as a C string. */
    if (!(out->data = base_malloc((size_t)size + 1)))
        return base_error(PRT_ERR_OUT_OF_MEMORY, "timing cache: out of memory");
    memcpy(out->data, bytes, size);
    out->data[size] = 0;
    out->size = size;
    return PRT_OK;
}

/* Version 2's code entries, after the tactic entries. */
static prt_status parse_code(tc_cache *c, const char *path, base_reader *r)
{
    uint32_t count = base_rd_u32(r);
    if (r->failed || count > TC_MAX_ENTRIES || count > (r->size - r->pos) / 24)
        return bad(path, "code entry count does not fit the file");
    for (uint32_t i = 0; i < count; i++) {
        size_t at = r->pos;
        tc_code *e;
        uint64_t hash;
        uint32_t n;
        prt_status st = code_grow(c);
        if (st)
            return st;
        e = &c->code[c->nb_code];
        if (!(e->key = base_rd_str(r, TC_MAX_KEY)))
            return bad_key(path, r, at, i);
        c->nb_code++; /* owned by c from here: tc_free releases it */
        hash = base_rd_u64(r);
        n = base_rd_u32(r);
        if (r->failed || n < 1 || n > 2) {
            char what[64];
            snprintf(what, sizeof what, "code entry %u: truncated or %u codes (1 or 2)",
                     (unsigned)i, (unsigned)n);
            return bad(path, what);
        }
        for (uint32_t k = 0; k < n; k++)
            if ((st = read_code(r, path, i, k, k == 0 ? &e->cubin : &e->ptx)) != PRT_OK)
                return st;
        if (hash != code_hash(e)) {
            /* The file's CRC held, so this was written wrong, not damaged in
             * transit; it is not used, and the next build compiles anew. */
            base_log(PRT_SEV_WARNING,
                     "timing cache '%s': code entry %u's hash disagrees with its "
                     "bytes; ignoring it",
                     path, (unsigned)i);
            c->nb_code--;
            base_free(e->key);
            base_free(e->cubin.data);
            base_free(e->ptx.data);
            c->dirty = 1;
        }
    }
    return PRT_OK;
}

/* Parses a whole file's bytes. */
static prt_status parse(tc_cache *c, const char *path, const uint8_t *p, size_t size)
{
    base_reader r = {p, size, 0, 0};
    uint32_t count, crc, version;
    prt_status code_st;
    if (size < 8 + 4 + 4 + 4 || memcmp(p, TC_MAGIC, 8) != 0)
        return bad(path, "bad magic or too short");
    r.pos = 8;
    version = base_rd_u32(&r);
    if (version != TC_VERSION && version != TC_VERSION_TACTICS)
        return base_error(PRT_ERR_VERSION,
                          "timing cache '%s': format version %u, this "
                          "plugrt reads %u",
                          path, (unsigned)(p[8] | p[9] << 8), TC_VERSION);
    memcpy(&crc, p + size - 4, 4); /* little-endian hosts (x86-64, arm64) */
    if (crc != base_crc32(p, size - 4))
        return bad(path, "checksum mismatch (damaged or altered)");
    r.size = size - 4;
    count = base_rd_u32(&r);
    if (r.failed || count > TC_MAX_ENTRIES || count > (r.size - r.pos) / 12)
        return bad(path, "entry count does not fit the file");
    for (uint32_t i = 0; i < count; i++) {
        size_t at = r.pos;
        char *key = base_rd_str(&r, TC_MAX_KEY);
        int32_t tactic = base_rd_i32(&r), formats[128];
        uint32_t n = base_rd_u32(&r);
        prt_status st;
        if (!key)
            return bad_key(path, &r, at, i);
        if (r.failed || n > 128) {
            base_free(key);
            return bad(path, r.failed ? "truncated entry" : "too many positions");
        }
        for (uint32_t k = 0; k < n; k++) {
            formats[k] = base_rd_i32(&r);
            if (formats[k] < 0 || formats[k] >= PRT_FORMAT_COUNT)
                r.failed = 1;
        }
        if (r.failed) {
            base_free(key);
            return bad(path, "truncated entry or unknown format");
        }
        st = tc_add(c, key, tactic, (int32_t)n, formats);
        if (st) {
            base_free(key);
            return st;
        }
    }
    if (version >= 2 && (code_st = parse_code(c, path, &r)) != PRT_OK)
        return code_st;
    if (r.pos != r.size)
        return bad(path, "bytes after the last entry");
    return PRT_OK;
}

prt_status tc_load(tc_cache *c, const char *path)
{
    const char *why;
    uint64_t size;
    int64_t got;
    uint8_t *bytes;
    prt_status st;
    int fd, err;
    memset(c, 0, sizeof *c);
    /* A regular file, opened without blocking: a FIFO named as the cache
     * must not hang the build waiting for a writer, nor a directory read
     * as a file of absurd size. */
    err = base_open_regular(path, &fd, &size, &why);
    if (err == ENOENT)
        return PRT_OK; /* a first build makes it */
    if (err)
        return base_error(PRT_ERR_IO, "timing cache '%s': cannot read it: %s", path, why);
    bytes = size < SIZE_MAX ? base_malloc((size_t)size + 1) : NULL;
    if (!bytes) {
        close(fd);
        return base_error(PRT_ERR_OUT_OF_MEMORY,
                          "timing cache '%s': out of memory for its %llu bytes", path,
                          (unsigned long long)size);
    }
    got = base_read_at(fd, bytes, (size_t)size, 0);
    st = got == (int64_t)size
             ? PRT_OK
             : base_error(PRT_ERR_IO, "timing cache '%s': read failed: %s", path,
                          got < 0 ? strerror(errno) : "the file shrank while being read");
    close(fd);
    if (st) {
        base_free(bytes);
        return st;
    }
    st = parse(c, path, bytes, (size_t)size);
    base_free(bytes);
    if (st)
        tc_free(c);
    return st;
}

prt_status tc_save(const tc_cache *c, const char *path)
{
    base_buf b = {0};
    char tmp[4096];
    FILE *f;
    uint32_t crc;
    int ok;
    base_buf_put(&b, TC_MAGIC, 8);
    base_buf_u32(&b, c->nb_code ? TC_VERSION : TC_VERSION_TACTICS);
    base_buf_u32(&b, (uint32_t)c->nb);
    for (int32_t i = 0; i < c->nb; i++) {
        base_buf_str(&b, c->entries[i].key);
        base_buf_i32(&b, c->entries[i].tactic);
        base_buf_u32(&b, (uint32_t)c->entries[i].nb_formats);
        for (int32_t k = 0; k < c->entries[i].nb_formats; k++)
            base_buf_i32(&b, c->entries[i].formats[k]);
    }
    if (c->nb_code)
        base_buf_u32(&b, (uint32_t)c->nb_code);
    for (int32_t i = 0; i < c->nb_code; i++) {
        const tc_code *e = &c->code[i];
        base_buf_str(&b, e->key);
        base_buf_u64(&b, code_hash(e));
        base_buf_u32(&b, e->ptx.size > 0 ? 2u : 1u);
        for (int k = 0; k < 2; k++) {
            const eng_kernel_code *k_code = k == 0 ? &e->cubin : &e->ptx;
            if (k_code->size <= 0)
                continue;
            base_buf_i32(&b, k_code->kind);
            base_buf_i32(&b, k_code->arch);
            base_buf_u32(&b, (uint32_t)k_code->size);
            base_buf_put(&b, k_code->data, (size_t)k_code->size);
        }
    }
    crc = b.failed ? 0 : base_crc32(b.data, b.size);
    base_buf_u32(&b, crc);
    if (b.failed) {
        base_buf_free(&b);
        return base_error(PRT_ERR_OUT_OF_MEMORY, "timing cache: out of memory");
    }
    /* Written beside the file and renamed over it: a reader never sees half
     * a cache. */
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        base_buf_free(&b);
        return base_error(PRT_ERR_INVALID_ARGUMENT, "timing cache path is too long");
    }
    f = fopen(tmp, "wb");
    ok = f && fwrite(b.data, 1, b.size, f) == b.size;
    if (f && fclose(f) != 0)
        ok = 0;
    base_buf_free(&b);
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return base_error(PRT_ERR_IO, "timing cache '%s': cannot write it: %s", path,
                          strerror(errno));
    }
    return PRT_OK;
}

const tc_entry *tc_find(const tc_cache *c, const char *key)
{
    for (int32_t i = 0; i < c->nb; i++)
        if (strcmp(c->entries[i].key, key) == 0)
            return &c->entries[i];
    return NULL;
}

prt_status tc_put(tc_cache *c, const char *key, int32_t tactic, int32_t n,
                  const int32_t *formats)
{
    tc_entry *e = (tc_entry *)tc_find(c, key);
    char *copy;
    prt_status st;
    c->dirty = 1;
    if (e) {
        e->tactic = tactic;
        e->nb_formats = n;
        memcpy(e->formats, formats, sizeof(int32_t) * (size_t)n);
        return PRT_OK;
    }
    copy = base_strdup(key);
    if (!copy)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "timing cache: out of memory");
    st = tc_add(c, copy, tactic, n, formats);
    if (st)
        base_free(copy);
    return st;
}

/* ---- compiled kernel source (kernel_code_cache) --------------------------- */

static prt_status code_dup(const eng_kernel_code *src, eng_kernel_code *dst)
{
    memset(dst, 0, sizeof *dst);
    if (src->size <= 0)
        return PRT_OK;
    if (!(dst->data = base_malloc((size_t)src->size + 1)))
        return base_error(PRT_ERR_OUT_OF_MEMORY, "timing cache: out of memory");
    memcpy(dst->data, src->data, (size_t)src->size);
    dst->data[src->size] = 0;
    dst->kind = src->kind;
    dst->arch = src->arch;
    dst->size = src->size;
    return PRT_OK;
}

static tc_code *code_find(tc_cache *c, const char *key)
{
    for (int32_t i = 0; i < c->nb_code; i++)
        if (strcmp(c->code[i].key, key) == 0)
            return &c->code[i];
    return NULL;
}

static prt_status code_get(void *ctx, const char *key, eng_kernel_code *cubin,
                           eng_kernel_code *ptx, int *found)
{
    const tc_code *e = code_find(ctx, key);
    prt_status st;
    *found = 0;
    if (!e)
        return PRT_OK;
    st = code_dup(&e->cubin, cubin);
    if (!st)
        st = code_dup(&e->ptx, ptx);
    if (st) {
        base_free(cubin->data);
        cubin->data = NULL;
        return st;
    }
    *found = 1;
    return PRT_OK;
}

static prt_status code_put(void *ctx, const char *key, const eng_kernel_code *cubin,
                           const eng_kernel_code *ptx)
{
    tc_cache *c = ctx;
    tc_code *e = code_find(c, key), fresh;
    prt_status st;
    memset(&fresh, 0, sizeof fresh);
    if (cubin->size <= 0 || cubin->size > TC_MAX_CODE || ptx->size > TC_MAX_CODE)
        return PRT_OK; /* nothing a file could hold: compiled again next time */
    st = code_dup(cubin, &fresh.cubin);
    if (!st)
        st = code_dup(ptx, &fresh.ptx);
    if (!st && !e) {
        fresh.key = base_strdup(key);
        if (!fresh.key)
            st = base_error(PRT_ERR_OUT_OF_MEMORY, "timing cache: out of memory");
        else if (!(st = code_grow(c)))
            e = &c->code[c->nb_code++];
    } else if (!st) {
        fresh.key = e->key;
        base_free(e->cubin.data);
        base_free(e->ptx.data);
    }
    if (st) {
        base_free(fresh.key);
        base_free(fresh.cubin.data);
        base_free(fresh.ptx.data);
        return st;
    }
    *e = fresh;
    c->dirty = 1;
    return PRT_OK;
}

kernel_code_cache tc_code_cache(tc_cache *c)
{
    kernel_code_cache k = {c, code_get, code_put};
    return k;
}
