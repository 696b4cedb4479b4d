/*
 * NVRTC results in the timing cache (kernel_nvrtc_compile_cached,
 * tc_code_cache): a second compile of the same source, options and arch,
 * through a cache saved and loaded again, runs no NVRTC and gives the same
 * bytes; other options or another arch compile anew; a cache without code
 * is written as version 1 (what an older plugrt reads) and a hand-written
 * version-1 file loads; a code entry whose hash disagrees with its bytes
 * is dropped with a warning and compiled again; a byte flipped anywhere
 * is a clear error; cached code that is not a cubin for the arch asked is
 * compiled again. The cache layer runs without NVRTC; the compile checks
 * are skipped where this machine has none.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builder/builder.h"
#include "kernel/kernel.h"
#include "testutil.h"

static const char *const SRC =
    "extern \"C\" __global__ void kc_scale(float *x, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] *= 2.0f;\n"
    "}\n";

static char path[256];

static uint8_t *read_all(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    uint8_t *b;
    long sz;
    CHECK(f != NULL);
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = malloc((size_t)sz + 1);
    CHECK(b && fread(b, 1, (size_t)sz, f) == (size_t)sz);
    fclose(f);
    *n = (size_t)sz;
    return b;
}

static void write_all(const char *p, const uint8_t *b, size_t n)
{
    FILE *f = fopen(p, "wb");
    CHECK(f && fwrite(b, 1, n, f) == n);
    if (f)
        fclose(f);
}

/* Rewrites the trailing CRC after an edit, as a careless tool would. */
static void fix_crc(uint8_t *b, size_t n)
{
    uint32_t crc = base_crc32(b, n - 4);
    memcpy(b + n - 4, &crc, 4);
}

static uint32_t version_of(const uint8_t *b)
{
    uint32_t v;
    memcpy(&v, b + 8, 4);
    return v;
}

/* The format's compatibility, with no NVRTC needed. */
static void check_format(void)
{
    tc_cache c;
    int32_t formats[2] = {PRT_FORMAT_LINEAR, PRT_FORMAT_LINEAR};
    uint8_t *b;
    size_t n = 0;
    kernel_code_cache kc;
    eng_kernel_code cub = {PRT_KERNEL_CUBIN, 90, (uint8_t *)"not really a cubin", 18};
    eng_kernel_code none = {0, 0, NULL, 0}, got_cub, got_ptx;
    int found = 0;

    /* Tactics only: version 1, what an older plugrt reads. */
    memset(&c, 0, sizeof c);
    CHECK_OK(tc_put(&c, "layer key", 3, 2, formats));
    CHECK_OK(tc_save(&c, path));
    tc_free(&c);
    b = read_all(path, &n);
    CHECK(b && n > 12 && version_of(b) == 1);
    free(b);
    CHECK_OK(tc_load(&c, path));
    CHECK(c.nb == 1 && c.nb_code == 0 && tc_find(&c, "layer key")->tactic == 3);

    /* With code: version 2, both kinds of entry come back. */
    kc = tc_code_cache(&c);
    CHECK_OK(kc.put(kc.ctx, "code key", &cub, &none));
    CHECK(c.dirty);
    CHECK_OK(tc_save(&c, path));
    tc_free(&c);
    b = read_all(path, &n);
    CHECK(b && n > 12 && version_of(b) == 2);
    CHECK_OK(tc_load(&c, path));
    kc = tc_code_cache(&c);
    CHECK(c.nb == 1 && c.nb_code == 1);
    CHECK_OK(kc.get(kc.ctx, "code key", &got_cub, &got_ptx, &found));
    CHECK(found && got_cub.size == cub.size && memcmp(got_cub.data, cub.data, 18) == 0 &&
          got_cub.kind == PRT_KERNEL_CUBIN && got_cub.arch == 90 && got_ptx.size == 0);
    base_free(got_cub.data);
    base_free(got_ptx.data);
    CHECK_OK(kc.get(kc.ctx, "other key", &got_cub, &got_ptx, &found));
    CHECK(!found);
    tc_free(&c);

    /* A code byte changed and the CRC made to agree: the entry's hash
     * catches it; the entry is dropped, the rest of the cache kept. */
    if (b) {
        b[n - 5] ^= 0x20; /* the last code byte */
        fix_crc(b, n);
        write_all(path, b, n);
        CHECK_OK(tc_load(&c, path));
        CHECK(c.nb == 1 && c.nb_code == 0 && c.dirty);
        tc_free(&c);
        /* Flipped without the CRC: the whole file is refused. */
        b[n - 5] ^= 0x20;
        b[n - 10] ^= 0x01;
        write_all(path, b, n);
        CHECK_ERR(tc_load(&c, path), PRT_ERR_MALFORMED, "checksum");
        /* A code entry of a kind that is not cubin first. */
        b[n - 10] ^= 0x01;
        fix_crc(b, n);
        {
            /* kind sits 12 + 18 + 4 bytes before the CRC's 4: i32 kind,
             * i32 arch, u32 size, 18 bytes. */
            int32_t bad_kind = PRT_KERNEL_PTX;
            memcpy(b + n - 4 - 18 - 12, &bad_kind, 4);
            fix_crc(b, n);
            write_all(path, b, n);
            CHECK_ERR(tc_load(&c, path), PRT_ERR_MALFORMED,
                      "code entry 0: code 0 has kind");
        }
        /* Every truncation is a clear error. */
        for (size_t cut = 0; cut + 4 < n; cut += 7) {
            write_all(path, b, cut);
            CHECK(tc_load(&c, path) != PRT_OK);
            tc_free(&c);
        }
        free(b);
    }
}

static int cache_hits, cache_warnings;
static void count_log(void *user, int32_t severity, const char *msg)
{
    (void)user;
    cache_hits += strstr(msg, "from the timing cache") != NULL;
    cache_warnings += severity == PRT_SEV_WARNING && strstr(msg, "compiling it again");
}

/* A cache whose stored code is whatever `bytes` is: to show that what a
 * cache gives is checked, not trusted. */
static eng_kernel_code planted;
static int planted_puts;
static prt_status planted_get(void *ctx, const char *key, eng_kernel_code *cubin,
                              eng_kernel_code *ptx, int *found)
{
    (void)ctx, (void)key;
    memset(ptx, 0, sizeof *ptx);
    *cubin = planted;
    cubin->data = base_malloc((size_t)planted.size);
    memcpy(cubin->data, planted.data, (size_t)planted.size);
    *found = 1;
    return PRT_OK;
}
static prt_status planted_put(void *ctx, const char *key, const eng_kernel_code *cubin,
                              const eng_kernel_code *ptx)
{
    (void)ctx, (void)key, (void)cubin, (void)ptx;
    planted_puts++;
    return PRT_OK;
}

/* Returns 0 when NVRTC is absent (skipped). */
static int check_compile(void)
{
    tc_cache c;
    kernel_code_cache kc, bad = {NULL, planted_get, planted_put};
    eng_kernel_code cub1, ptx1, cub2, ptx2;
    int64_t runs0 = kernel_nvrtc_compiles();
    int64_t len = (int64_t)strlen(SRC);
    prt_status st;

    memset(&c, 0, sizeof c);
    kc = tc_code_cache(&c);
    st = kernel_nvrtc_compile_cached(SRC, len, "-default-device", 90, "L", &kc, &cub1,
                                     &ptx1);
    if (st == PRT_ERR_UNSUPPORTED && strstr(prt_last_error(), "no NVRTC"))
        return 0;
    CHECK_OK(st);
    CHECK(kernel_nvrtc_compiles() == runs0 + 1);
    CHECK(c.nb_code == 1 && c.dirty);
    CHECK_OK(tc_save(&c, path));
    tc_free(&c);

    /* The next build: loads the file, runs no NVRTC, gets the same code. */
    CHECK_OK(tc_load(&c, path));
    kc = tc_code_cache(&c);
    prt_set_logger(count_log, NULL, PRT_SEV_VERBOSE);
    CHECK_OK(kernel_nvrtc_compile_cached(SRC, len, "-default-device", 90, "L", &kc, &cub2,
                                         &ptx2));
    prt_set_logger(NULL, NULL, 0);
    CHECK(kernel_nvrtc_compiles() == runs0 + 1 && cache_hits == 1);
    CHECK(cub2.kind == PRT_KERNEL_CUBIN && cub2.arch == 90 && cub2.size == cub1.size &&
          memcmp(cub1.data, cub2.data, (size_t)cub1.size) == 0);
    CHECK(ptx2.size == ptx1.size &&
          (ptx1.size == 0 || memcmp(ptx1.data, ptx2.data, (size_t)ptx1.size) == 0));
    base_free(cub2.data);
    base_free(ptx2.data);
    base_free(cub1.data);
    base_free(ptx1.data);

    /* Other options, another arch: compiled, and kept beside. */
    CHECK_OK(kernel_nvrtc_compile_cached(SRC, len, NULL, 90, "L", &kc, &cub2, &ptx2));
    base_free(cub2.data);
    base_free(ptx2.data);
    CHECK_OK(kernel_nvrtc_compile_cached(SRC, len, "-default-device", 75, "L", &kc, &cub2,
                                         &ptx2));
    CHECK(cub2.arch == 75);
    CHECK(kernel_nvrtc_compiles() == runs0 + 3 && c.nb_code == 3);
    base_free(cub2.data);
    base_free(ptx2.data);

    /* A cache giving an sm_75 cubin for an sm_90 compile: not used. */
    planted.kind = PRT_KERNEL_CUBIN;
    planted.arch = 90; /* what the entry claims; the ELF says 75 */
    CHECK_OK(kernel_nvrtc_compile_cached(SRC, len, "-default-device", 75, "L", &kc, &cub2,
                                         &ptx2));
    CHECK(kernel_nvrtc_compiles() == runs0 + 3); /* from c */
    planted.data = cub2.data;
    planted.size = cub2.size;
    CHECK_OK(kernel_nvrtc_compile_cached(SRC, len, "-default-device", 90, "L", &bad,
                                         &cub1, &ptx1));
    CHECK(kernel_nvrtc_compiles() == runs0 + 4 && planted_puts == 1);
    {
        int32_t arch = 0;
        CHECK_OK(kernel_code_arch(PRT_KERNEL_CUBIN, cub1.data, cub1.size, &arch));
        CHECK(arch == 90);
    }
    base_free(cub2.data);
    base_free(ptx2.data);
    base_free(cub1.data);
    base_free(ptx1.data);
    tc_free(&c);
    return 1;
}

int main(void)
{
    int compiled;
    tu_watchdog("test_kernel_cache", 120);
    snprintf(path, sizeof path, "%s/prt_kernel_cache_%d.tc",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    check_format();
    compiled = check_compile();
    printf("test_kernel_cache: %s\n", compiled ? "NVRTC ran once per distinct compile"
                                               : "NVRTC checks skipped (no libnvrtc)");
    remove(path);
    return tu_finish("test_kernel_cache");
}
