/*
 * The timing cache (prt_builder_config_set_timing_cache_file): the choices
 * autotuning made, so later builds of the same layers on the same device
 * skip timing.
 *
 * File, little-endian, validated like an engine file (magic, version, then
 * a CRC-32 of everything before it, bounded reads):
 *   u8[8] "PLUGRTTC", u32 version (1), u32 entry count, per entry:
 *     str key (what the choice depends on, as text: device, compute
 *         capability, plugin key, a hash of its fields, every position's
 *         dtype and min/opt/max dims),
 *     i32 tactic, u32 position count (<= 128), i32 format per position;
 *   u32 CRC-32.
 * A string is a u32 byte count and the bytes (no NUL), at most 4096 bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "builder/builder.h"

#define TC_MAGIC "PLUGRTTC"
#define TC_VERSION 1u
#define TC_MAX_KEY 4096
#define TC_MAX_ENTRIES (1 << 20)

void tc_free(tc_cache *c)
{
    for (int32_t i = 0; i < c->nb; i++)
        base_free(c->entries[i].key);
    base_free(c->entries);
    memset(c, 0, sizeof *c);
}

static prt_status bad(const char *path, const char *what)
{
    return base_error(PRT_ERR_MALFORMED,
                      "timing cache '%s' is not a valid plugrt timing "
                      "cache: %s",
                      path, what);
}

static prt_status tc_add(tc_cache *c, char *key, int32_t tactic, int32_t n,
                         const int32_t *formats)
{
    tc_entry *e;
    if (c->nb == c->cap) {
        int32_t cap = c->cap ? c->cap * 2 : 16;
        tc_entry *grown = base_realloc(c->entries, sizeof *grown * (size_t)cap);
        if (!grown)
            return base_error(PRT_ERR_OUT_OF_MEMORY, "timing cache: out of memory");
        c->entries = grown;
        c->cap = cap;
    }
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

/* Parses a whole file's bytes. */
static prt_status parse(tc_cache *c, const char *path, const uint8_t *p, size_t size)
{
    base_reader r = {p, size, 0, 0};
    uint32_t count, crc;
    if (size < 8 + 4 + 4 + 4 || memcmp(p, TC_MAGIC, 8) != 0)
        return bad(path, "bad magic or too short");
    r.pos = 8;
    if (base_rd_u32(&r) != TC_VERSION)
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
    base_buf_u32(&b, TC_VERSION);
    base_buf_u32(&b, (uint32_t)c->nb);
    for (int32_t i = 0; i < c->nb; i++) {
        base_buf_str(&b, c->entries[i].key);
        base_buf_i32(&b, c->entries[i].tactic);
        base_buf_u32(&b, (uint32_t)c->entries[i].nb_formats);
        for (int32_t k = 0; k < c->entries[i].nb_formats; k++)
            base_buf_i32(&b, c->entries[i].formats[k]);
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
