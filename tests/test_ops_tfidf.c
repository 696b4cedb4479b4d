/*
 * TfIdfVectorizer (src/ops/tfidf.c) on the CPU against a plain reference
 * written here: for every n-gram of the pool whose length is in [min, max],
 * every skip distance it may take (1 .. max_skip_count + 1; a 1-gram only
 * 1) and every start in the row, a match adds one to its column; then the
 * mode (TF the counts, IDF weights[column] where the count is not 0,
 * TFIDF count * weights[column]; weights are read by output column, as
 * ONNX Runtime and ONNX's reference read them). Cases: ONNX's own examples,
 * every mode with and without weights, 1-D, 2-D and a scalar, int32 and
 * int64, min_gram_length 1 against 2, skips past the row, columns shared
 * and left empty, 3-grams, random pools on dynamic dims, one and three
 * threads, allocation failures; then the refusals, each naming the problem.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_testutil.h"

/* One op's fields (arrays borrowed: they must outlive the run). */
typedef struct tf_spec {
    int32_t min_gram, max_gram, max_skip;
    const char *mode;
    const int64_t *counts, *indexes, *pool;
    int64_t nc, ni, np;
    const float *weights; /* NULL: none */
    int64_t nw;
} tf_spec;

static prt_field fld_i64(const char *name, const int64_t *v, int64_t n)
{
    prt_field f = {name, v, PRT_FIELD_INT64, n};
    return f;
}

/* The spec's fields into f (at least 8); their count. */
static int32_t tf_fields(const tf_spec *s, prt_field *f)
{
    int32_t n = 0;
    f[n++] = ot_fld_i32("min_gram_length", &s->min_gram, 1);
    f[n++] = ot_fld_i32("max_gram_length", &s->max_gram, 1);
    f[n++] = ot_fld_i32("max_skip_count", &s->max_skip, 1);
    f[n++] = ot_fld_str("mode", s->mode);
    f[n++] = fld_i64("ngram_counts", s->counts, s->nc);
    f[n++] = fld_i64("ngram_indexes", s->indexes, s->ni);
    f[n++] = fld_i64("pool_int64s", s->pool, s->np);
    if (s->weights) {
        prt_field w = {"weights", s->weights, PRT_FIELD_FLOAT32, s->nw};
        f[n++] = w;
    }
    return n;
}

/* The reference: want[row * W + column] for x of rank 0, 1 or 2. */
static void tf_reference(const tf_spec *s, const ot_tensor *x, double *want, int64_t W)
{
    int64_t rows = x->dims.nb_dims == 2 ? x->dims.d[0] : 1;
    int64_t C = x->dims.nb_dims == 0 ? 1 : x->dims.d[x->dims.nb_dims - 1];
    for (int64_t r = 0; r < rows; r++) {
        double *w = want + r * W;
        int64_t id = 0;
        for (int64_t c = 0; c < W; c++)
            w[c] = 0.0;
        for (int64_t lv = 0; lv < s->nc; lv++) {
            int64_t n = lv + 1, start = s->counts[lv];
            int64_t end = lv + 1 < s->nc ? s->counts[lv + 1] : s->np;
            for (int64_t g = 0; g < (end - start) / n; g++, id++) {
                const int64_t *items = s->pool + start + g * n;
                int64_t dmax = n == 1 ? 1 : s->max_skip + 1;
                if (n < s->min_gram || n > s->max_gram)
                    continue;
                for (int64_t d = 1; d <= dmax; d++)
                    for (int64_t b = 0; b + (n - 1) * d < C; b++) {
                        int64_t j = 0;
                        while (j < n && (int64_t)ot_get(x, r * C + b + j * d) == items[j])
                            j++;
                        if (j == n)
                            w[s->indexes[id]] += 1.0;
                    }
            }
        }
        for (int64_t c = 0; c < W; c++) {
            double wt = s->weights ? (double)s->weights[c] : 1.0;
            if (strcmp(s->mode, "IDF") == 0)
                w[c] = w[c] > 0 ? wt : 0.0;
            else if (strcmp(s->mode, "TFIDF") == 0)
                w[c] = (double)(float)((float)w[c] * (float)wt);
        }
    }
}

static int64_t tf_width(const tf_spec *s)
{
    int64_t m = 0;
    for (int64_t k = 0; k < s->ni; k++)
        m = s->indexes[k] > m ? s->indexes[k] : m;
    return m + 1;
}

/* Runs s on x (dims dynamic where dyn says; NULL static) and checks the
 * result against the reference; `want_fixed` (NULL: none) is a result
 * known from elsewhere (ONNX's examples), checked too. */
static void tf_check(const char *what, const tf_spec *s, const ot_tensor *x,
                     const uint32_t *dyn, const double *want_fixed)
{
    prt_field f[8];
    int32_t nf = tf_fields(s, f);
    int64_t W = tf_width(s), rows = x->dims.nb_dims == 2 ? x->dims.d[0] : 1;
    prt_dims yd = x->dims.nb_dims == 2 ? D2(rows, W) : D1(W);
    double *want = calloc((size_t)(rows * W + 1), sizeof(double));
    ot_tensor y = {0};
    prt_status st;
    tf_reference(s, x, want, W);
    if (want_fixed)
        for (int64_t i = 0; i < rows * W; i++)
            if (want[i] != want_fixed[i]) {
                fprintf(stderr, "%s: the reference gives %g at %lld, ONNX %g\n", what,
                        want[i], (long long)i, want_fixed[i]);
                CHECK(!"the reference agrees with ONNX's example");
                break;
            }
    st = ot_run_op_dyn("TfIdfVectorizer", f, nf, x, 1, dyn, &y);
    if (st != PRT_OK)
        fprintf(stderr, "%s: %s\n", what, prt_last_error());
    CHECK(st == PRT_OK);
    if (st == PRT_OK) {
        CHECK(y.dtype == PRT_FLOAT32);
        ot_check_close(what, &y, &yd, want, 0);
    }
    ot_free(&y);
    free(want);
}

/* One thread and three give the same bytes. */
static void tf_threads(const char *what, const tf_spec *s, const ot_tensor *x)
{
    prt_field f[8];
    int32_t nf = tf_fields(s, f);
    prt_engine *e = NULL;
    ot_tensor one = {0}, three = {0};
    CHECK_OK(ot_build_op("TfIdfVectorizer", f, nf, x, 1, NULL, &e));
    if (e) {
        CHECK_OK(ot_run_engine_threads(e, x, 1, 1, &one));
        CHECK_OK(ot_run_engine_threads(e, x, 1, 3, &three));
        if (!one.data || !three.data ||
            memcmp(one.data, three.data, (size_t)tu_volume(&one.dims) * sizeof(float)))
            fprintf(stderr, "%s: 1 and 3 threads differ\n", what);
        CHECK(one.data && three.data &&
              memcmp(one.data, three.data,
                     (size_t)tu_volume(&one.dims) * sizeof(float)) == 0);
        prt_engine_destroy(e);
    }
    ot_free(&one);
    ot_free(&three);
}

static ot_tensor tf_input(int32_t dt, prt_dims d, const int64_t *v)
{
    ot_tensor x = ot_make(dt, d);
    for (int64_t i = 0; i < tu_volume(&d); i++)
        ot_set(&x, i, (double)v[i]);
    return x;
}

/* ---- ONNX's examples (its node tests and operator doc) -------------------- */

static const int64_t ex_x[12] = {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8};
static const int64_t ex_counts[2] = {0, 4};
static const int64_t ex_indexes[7] = {0, 1, 2, 3, 4, 5, 6};
static const int64_t ex_pool[10] = {2, 3, 5, 4, 5, 6, 7, 8, 6, 7};

/* The seven node tests of ONNX (1-D and a batch of two rows of 6). */
static void test_onnx_examples(void)
{
    static const struct {
        const char *name;
        int32_t min_gram, max_skip, batch;
        double want[14];
    } ex[] = {
        {"tf_only_bigrams_skip0", 2, 0, 0, {0, 0, 0, 0, 1, 1, 1}},
        {"tf_batch_onlybigrams_skip0",
         2,
         0,
         1,
         {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1}},
        {"tf_onlybigrams_skip5", 2, 5, 0, {0, 0, 0, 0, 1, 3, 1}},
        {"tf_batch_onlybigrams_skip5",
         2,
         5,
         1,
         {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1}},
        /* 1-grams once, 2-grams at every distance. */
        {"tf_uniandbigrams_skip5", 1, 5, 0, {0, 3, 1, 0, 1, 3, 1}},
        {"tf_batch_uniandbigrams_skip5",
         1,
         5,
         1,
         {0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1}},
    };
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        tf_spec s = {ex[i].min_gram,
                     2,
                     ex[i].max_skip,
                     "TF",
                     ex_counts,
                     ex_indexes,
                     ex_pool,
                     2,
                     7,
                     10,
                     NULL,
                     0};
        ot_tensor x = tf_input(PRT_INT32, ex[i].batch ? D2(2, 6) : D1(12), ex_x);
        tf_check(ex[i].name, &s, &x, NULL, ex[i].want);
        ot_free(&x);
    }
    /* levelempty: no 1-grams at all (ngram_counts [0, 0]). */
    {
        static const int64_t counts[2] = {0, 0}, indexes[3] = {0, 1, 2};
        static const int64_t pool[6] = {5, 6, 7, 8, 6, 7};
        static const double want[3] = {1, 1, 1};
        tf_spec e = {2, 2, 0, "TF", counts, indexes, pool, 2, 3, 6, NULL, 0};
        ot_tensor x = tf_input(PRT_INT32, D1(12), ex_x);
        tf_check("tf_onlybigrams_levelempty", &e, &x, NULL, want);
        ot_free(&x);
    }
}

/* ---- the modes, dtypes, ranks and lengths --------------------------------- */

static void test_modes(void)
{
    static const float w7[7] = {0.5f, 2.0f, 3.0f, 0.25f, 1.5f, -1.0f, 7.0f};
    static const char *const modes[3] = {"TF", "IDF", "TFIDF"};
    const prt_dims dims[3] = {D1(12), D2(2, 6), D2(3, 4)};
    for (int m = 0; m < 3; m++)
        for (int wt = 0; wt < 2; wt++)
            for (int dt = 0; dt < 2; dt++)
                for (int di = 0; di < 3; di++)
                    for (int32_t mn = 1; mn <= 2; mn++)
                        for (int32_t sk = 0; sk <= 6; sk += 3) {
                            tf_spec s = {
                                mn,      2, sk, modes[m], ex_counts,      ex_indexes,
                                ex_pool, 2, 7,  10,       wt ? w7 : NULL, wt ? 7 : 0};
                            ot_tensor x =
                                tf_input(dt ? PRT_INT64 : PRT_INT32, dims[di], ex_x);
                            char what[96];
                            snprintf(what, sizeof what, "%s%s %s rank %d min %d skip %d",
                                     modes[m], wt ? " weights" : "",
                                     dt ? "int64" : "int32", (int)dims[di].nb_dims,
                                     (int)mn, (int)sk);
                            tf_check(what, &s, &x, NULL, NULL);
                            ot_free(&x);
                        }
}

/* Unigrams alone (min = max = 1: no distance at all), 1-, 2- and 3-grams
 * together with columns shared and left empty, a scalar X, X shorter than
 * any n-gram, empty rows and no rows, values beyond int32 in the pool. */
static void test_shapes_and_pools(void)
{
    static const int64_t counts[3] = {0, 3, 7};
    /* 1-grams 1 2 3; 2-grams (1 2) (2 1); 3-grams (1 2 3) (3 3 3). Columns:
     * 2-gram (2 1) shares column 0 with 1-gram 1; columns 5 and 7 unused. */
    static const int64_t pool[13] = {1, 2, 3, 1, 2, 2, 1, 1, 2, 3, 3, 3, 3};
    static const int64_t indexes[7] = {0, 1, 2, 3, 0, 4, 6};
    static const float w7[7] = {1.5f, 2, 3, 4, 5, 6, 7};
    static const int64_t xs[24] = {1, 2, 3, 3, 3, 1, 2, 1, 2, 3, 3, 3,
                                   2, 1, 1, 2, 3, 1, 3, 2, 3, 3, 3, 1};
    static const char *const modes[3] = {"TF", "IDF", "TFIDF"};
    for (int m = 0; m < 3; m++)
        for (int32_t mn = 1; mn <= 3; mn++)
            for (int32_t mx = mn; mx <= 3; mx++)
                for (int32_t sk = 0; sk <= 2; sk++) {
                    tf_spec s = {mn,   mx, sk, modes[m], counts,        indexes,
                                 pool, 3,  7,  13,       m ? w7 : NULL, 7};
                    ot_tensor x = tf_input(PRT_INT64, D2(2, 12), xs);
                    char what[96];
                    snprintf(what, sizeof what, "1-3 grams %s min %d max %d skip %d",
                             modes[m], (int)mn, (int)mx, (int)sk);
                    tf_check(what, &s, &x, NULL, NULL);
                    ot_free(&x);
                }
    {
        tf_spec s = {1, 3, 1, "TF", counts, indexes, pool, 3, 7, 13, NULL, 0};
        ot_tensor x = tf_input(PRT_INT32, D0(), xs);
        tf_check("scalar X", &s, &x, NULL, NULL);
        ot_free(&x);
        s.min_gram = 3;
        x = tf_input(PRT_INT32, D2(3, 2), xs);
        tf_check("rows shorter than a 3-gram", &s, &x, NULL, NULL);
        ot_free(&x);
        x = ot_make(PRT_INT64, D2(3, 0));
        tf_check("empty rows", &s, &x, NULL, NULL);
        ot_free(&x);
        x = ot_make(PRT_INT64, D2(0, 5));
        tf_check("no rows", &s, &x, NULL, NULL);
        ot_free(&x);
    }
    {
        static const int64_t c1[1] = {0}, i2[2] = {1, 0};
        static const int64_t big[2] = {(int64_t)1 << 40, 7};
        static const int64_t xv[4] = {7, 7, 0, 7};
        tf_spec s = {1, 1, 3, "TF", c1, i2, big, 1, 2, 2, NULL, 0};
        ot_tensor x = tf_input(PRT_INT64, D1(4), xv);
        tf_check("a pool value beyond int32", &s, &x, NULL, NULL);
        ot_free(&x);
        x = tf_input(PRT_INT32, D1(4), xv);
        tf_check("a pool value beyond int32, int32 X", &s, &x, NULL, NULL);
        ot_free(&x);
    }
    /* Any skip past the row gives what a skip to its end gives: INT32_MAX
     * (no reference: its loop would be as long) against C - 2. */
    {
        tf_spec s = {1, 3, 10, "TF", counts, indexes, pool, 3, 7, 13, NULL, 0};
        prt_field f[8];
        int32_t nf;
        ot_tensor x = tf_input(PRT_INT64, D2(2, 12), xs), a = {0}, b = {0};
        tf_check("skip 10 in rows of 12", &s, &x, NULL, NULL);
        nf = tf_fields(&s, f);
        CHECK_OK(ot_run_op("TfIdfVectorizer", f, nf, &x, 1, &a));
        s.max_skip = INT32_MAX;
        nf = tf_fields(&s, f);
        CHECK_OK(ot_run_op("TfIdfVectorizer", f, nf, &x, 1, &b));
        CHECK(a.data && b.data && memcmp(a.data, b.data, 2 * 7 * sizeof(float)) == 0);
        ot_free(&x);
        ot_free(&a);
        ot_free(&b);
    }
}

/* Random pools (every n-gram once) over a small alphabet, so that most
 * windows hit; dims dynamic; the same bits on 1 and 3 threads. */
static void test_random(void)
{
    tu_rng r;
    tu_rng_seed(&r, 4242);
    for (int v = 0; v < 40; v++) {
        int64_t nc = tu_rng_range(&r, 1, 4), counts[4], pool[256], np = 0, ni = 0;
        int64_t indexes[128], alphabet = tu_rng_range(&r, 2, 5);
        float w[128];
        int32_t mn = (int32_t)tu_rng_range(&r, 1, nc),
                mx = (int32_t)tu_rng_range(&r, mn, nc);
        int32_t sk = (int32_t)tu_rng_range(&r, 0, 4);
        const char *mode = v % 3 == 0 ? "TF" : v % 3 == 1 ? "IDF" : "TFIDF";
        int64_t rows = tu_rng_range(&r, 1, 5), C = tu_rng_range(&r, 0, 30);
        int64_t *xv = calloc((size_t)(rows * C + 1), sizeof *xv);
        uint32_t dyn = 3;
        for (int64_t lv = 0; lv < nc; lv++) {
            int64_t n = lv + 1, want = tu_rng_range(&r, 0, 8);
            counts[lv] = np;
            for (int64_t g = 0; g < want; g++) {
                int64_t at = np, dup = 0;
                for (int64_t j = 0; j < n; j++)
                    pool[np++] = tu_rng_range(&r, 0, alphabet - 1);
                /* Drop a draw the level holds already. */
                for (int64_t o = counts[lv]; o < at && !dup; o += n)
                    dup = memcmp(pool + o, pool + at, (size_t)n * sizeof *pool) == 0;
                if (dup)
                    np = at;
                else
                    ni++;
            }
        }
        if (ni == 0) {
            counts[0] = 0;
            pool[0] = 1;
            np = 1;
            ni = 1;
            for (int64_t lv = 1; lv < nc; lv++)
                counts[lv] = 1;
        }
        for (int64_t k = 0; k < ni; k++) {
            indexes[k] = tu_rng_range(&r, 0, ni + 2); /* shared and empty columns */
            w[k] = (float)tu_rng_range(&r, -8, 8) / 4.0f;
        }
        for (int64_t k = ni; k < 128; k++)
            w[k] = 1.0f;
        for (int64_t i = 0; i < rows * C; i++)
            xv[i] = tu_rng_range(&r, 0, alphabet);
        {
            /* weights one per n-gram, read by column: widest column < ni. */
            int use_w = v % 2 && tf_width(&(tf_spec){.indexes = indexes, .ni = ni}) <= ni;
            tf_spec s = {mn,   mx, sk, mode, counts,           indexes,
                         pool, nc, ni, np,   use_w ? w : NULL, ni};
            ot_tensor x = tf_input(v % 4 < 2 ? PRT_INT32 : PRT_INT64, D2(rows, C), xv);
            char what[96];
            snprintf(what, sizeof what, "random %d (%s min %d max %d skip %d)", v, mode,
                     (int)mn, (int)mx, (int)sk);
            tf_check(what, &s, &x, &dyn, NULL);
            tf_threads(what, &s, &x);
            ot_free(&x);
        }
        free(xv);
    }
    /* Rows enough to be spread over the threads. */
    {
        static const int64_t counts[3] = {0, 3, 7}, indexes[7] = {0, 1, 2, 3, 4, 5, 6};
        static const int64_t pool[13] = {1, 2, 3, 1, 2, 2, 1, 1, 2, 3, 3, 3, 3};
        static const float w[7] = {0.5f, 1, 2, 3, 4, 5, 6};
        tf_spec s = {1, 3, 3, "TFIDF", counts, indexes, pool, 3, 7, 13, w, 7};
        ot_tensor x = ot_make(PRT_INT64, D2(400, 40));
        for (int64_t i = 0; i < 400 * 40; i++)
            ot_set(&x, i, (double)tu_rng_range(&r, 0, 3));
        tf_check("400 rows", &s, &x, NULL, NULL);
        tf_threads("400 rows", &s, &x);
        ot_free(&x);
    }
}

static void test_alloc_failures(void)
{
    tf_spec s = {1, 2, 5, "TFIDF", ex_counts, ex_indexes, ex_pool, 2, 7, 10, NULL, 0};
    prt_field f[8];
    int32_t nf = tf_fields(&s, f);
    ot_tensor x = tf_input(PRT_INT64, D2(2, 6), ex_x);
    int64_t n = ot_alloc_failures("TfIdfVectorizer", f, nf, &x, 1);
    CHECK(n > 0 && n < OT_MAX_ALLOCS);
    ot_free(&x);
}

/* ---- refusals ---------------------------------------------------------------- */

/* Creating the op from s (with `extra` appended when not NULL) fails with
 * a message holding `sub`. */
static void refuse(const tf_spec *s, const prt_field *extra, const char *sub)
{
    prt_field f[9];
    int32_t nf = tf_fields(s, f);
    prt_plugin *p = NULL;
    if (extra)
        f[nf++] = *extra;
    CHECK_ERR(ot_make_op("TfIdfVectorizer", f, nf, &p), PRT_ERR_INVALID_ARGUMENT, sub);
    if (p)
        p->vt->runtime->destroy(p);
}

static void test_refusals(void)
{
    const tf_spec ok = {1, 2, 5, "TF", ex_counts, ex_indexes, ex_pool, 2, 7, 10, NULL, 0};
    tf_spec s;
    prt_plugin *p = NULL;
    {
        prt_field f[9];
        int32_t nf = tf_fields(&ok, f);
        f[nf++] = ot_fld_str("pool_strings", "a\0b");
        CHECK_ERR(ot_make_op("TfIdfVectorizer", f, nf, &p), PRT_ERR_UNSUPPORTED,
                  "pool_strings is not supported: plugrt has no string tensors");
        if (p)
            p->vt->runtime->destroy(p);
        p = NULL;
        /* Without mode (field 3): required. */
        nf = tf_fields(&ok, f);
        memmove(&f[3], &f[4], (size_t)(nf - 4) * sizeof f[0]);
        nf--;
        p = NULL;
        CHECK_ERR(ot_make_op("TfIdfVectorizer", f, nf, &p), PRT_ERR_INVALID_ARGUMENT,
                  "field 'mode' is required");
        if (p)
            p->vt->runtime->destroy(p);
        /* Without min_gram_length (field 0). */
        nf = tf_fields(&ok, f);
        p = NULL;
        CHECK_ERR(ot_make_op("TfIdfVectorizer", f + 1, nf - 1, &p),
                  PRT_ERR_INVALID_ARGUMENT, "field 'min_gram_length' is required");
        if (p)
            p->vt->runtime->destroy(p);
    }
    s = ok;
    s.mode = "BM25";
    refuse(&s, NULL, "mode 'BM25' is not TF, IDF or TFIDF");
    s = ok;
    s.min_gram = 0;
    refuse(&s, NULL, "1 <= min_gram_length <= max_gram_length");
    s = ok;
    s.min_gram = 2;
    s.max_gram = 1;
    refuse(&s, NULL, "min_gram_length 2 and max_gram_length 1");
    s = ok;
    s.max_gram = 3;
    refuse(&s, NULL, "max_gram_length is 3 but ngram_counts has 2 levels");
    s = ok;
    s.max_skip = -1;
    refuse(&s, NULL, "max_skip_count is -1");
    {
        static const int64_t dec[2] = {4, 2}, far[2] = {0, 11}, odd[2] = {0, 5};
        s = ok;
        s.counts = dec;
        refuse(&s, NULL, "ngram_counts decreases at 1 (2 after 4)");
        s.counts = far;
        refuse(&s, NULL, "ngram_counts[1] is 11; it must be in [0, 10]");
        s.counts = odd;
        refuse(&s, NULL,
               "the 2-grams (pool_int64s[5:10]) are 5 items, not whole 2-grams");
    }
    s = ok;
    s.ni = 6;
    refuse(&s, NULL, "ngram_indexes has 6 values but the pool holds 7 n-grams");
    {
        static const int64_t neg[7] = {0, 1, 2, -3, 4, 5, 6};
        static const int64_t gap[7] = {0, 1, 2, 3, 4, 5, 9};
        static const float w7[7] = {1, 1, 1, 1, 1, 1, 1};
        s = ok;
        s.indexes = neg;
        refuse(&s, NULL, "ngram_indexes[3] is -3");
        s = ok;
        s.weights = w7;
        s.nw = 6;
        refuse(&s, NULL, "weights has 6 values; it needs one per n-gram");
        s.nw = 7;
        s.indexes = gap;
        refuse(&s, NULL,
               "ngram_indexes reaches column 9 but weights, read by column, "
               "has 7 values");
    }
    {
        static const int64_t dup[10] = {2, 3, 5, 4, 5, 6, 7, 8, 5, 6};
        static const int64_t dup1[10] = {2, 3, 2, 4, 5, 6, 7, 8, 6, 7};
        s = ok;
        s.pool = dup;
        refuse(&s, NULL, "pool_int64s holds the same 2-gram twice (at 4 and 8)");
        /* Outside [min, max] a level is not matched, so a repeat there is
         * harmless. */
        s.pool = dup1;
        s.min_gram = 2;
        {
            prt_field f[8];
            int32_t nf = tf_fields(&s, f);
            p = NULL;
            CHECK_OK(ot_make_op("TfIdfVectorizer", f, nf, &p));
            if (p)
                p->vt->runtime->destroy(p);
        }
        s.min_gram = 1;
        refuse(&s, NULL, "pool_int64s holds the same 1-gram twice (at 0 and 2)");
    }
    s = ok;
    s.np = 0;
    refuse(&s, NULL, "field 'pool_int64s' is required and must not be empty");
    {
        static const float fl[1] = {1.0f};
        prt_field bad = {"ngram_indexes", fl, PRT_FIELD_FLOAT32, 1};
        prt_field f[8];
        int32_t nf = tf_fields(&ok, f);
        f[5] = bad;
        p = NULL;
        CHECK_ERR(ot_make_op("TfIdfVectorizer", f, nf, &p), PRT_ERR_INVALID_ARGUMENT,
                  "field 'ngram_indexes' has type float32, expected int64");
        if (p)
            p->vt->runtime->destroy(p);
    }
    /* At build: X's dtype and rank. */
    {
        prt_field f[8];
        int32_t nf = tf_fields(&ok, f);
        ot_tensor x = ot_make(PRT_FLOAT32, D1(4)), y = {0};
        CHECK_ERR(ot_run_op("TfIdfVectorizer", f, nf, &x, 1, &y), PRT_ERR_UNSUPPORTED,
                  "dtype float32 is not supported here (supported: int32 or int64)");
        ot_free(&x);
        ot_free(&y);
        x = ot_make(PRT_INT64, D3(2, 2, 3));
        CHECK_ERR(ot_run_op("TfIdfVectorizer", f, nf, &x, 1, &y), PRT_ERR_SHAPE,
                  "X has rank 3; it must be [C] or [N, C]");
        ot_free(&x);
        ot_free(&y);
    }
}

int main(void)
{
    test_onnx_examples();
    test_modes();
    test_shapes_and_pools();
    test_random();
    test_alloc_failures();
    test_refusals();
    return tu_finish("test_ops_tfidf");
}
