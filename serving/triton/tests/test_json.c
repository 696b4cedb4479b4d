/* The backend's JSON reader and writer (serving/triton/json.c): what model
 * configurations use, the corners of RFC 8259 that a hand-written config or
 * a hostile one can reach, and a round trip through the writer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../json.h"

static int checks, failed;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        checks++;                                                                        \
        if (!(cond)) {                                                                   \
            failed++;                                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);     \
        }                                                                                \
    } while (0)

static tj_value *parse(const char *s, char *err, size_t n)
{
    return tj_parse(s, strlen(s), err, n);
}

/* Parses `s`, expecting an error whose message contains `what`. */
static void refuse(const char *s, const char *what)
{
    char err[128];
    tj_value *v = parse(s, err, sizeof err);
    CHECK(v == NULL);
    CHECK(strstr(err, what) != NULL);
    if (!v && !strstr(err, what))
        fprintf(stderr, "  %s: got '%s', want '%s'\n", s, err, what);
    tj_free(v);
}

static void test_config(void)
{
    /* The shape the server sends: int64 dims as numbers or strings. */
    const char *cfg =
        "{\"name\":\"bert\",\"max_batch_size\":8,\"input\":[{\"name\":\"ids\","
        "\"data_type\":\"TYPE_INT64\",\"dims\":[\"-1\",32]}],"
        "\"parameters\":{\"plugins\":{\"string_value\":\"a.so,b.so\"}},"
        "\"dynamic_batching\":{},\"ok\":true,\"none\":null,\"f\":-1.5e3}";
    char err[128];
    tj_value *v = parse(cfg, err, sizeof err), *in, *dims;
    int64_t x = 0;
    CHECK(v && v->kind == TJ_OBJECT);
    if (!v)
        return;
    CHECK(tj_as_int(tj_get(v, "max_batch_size"), &x) && x == 8);
    in = tj_get(v, "input");
    CHECK(in && in->kind == TJ_ARRAY && in->count == 1);
    dims = tj_get(in->items[0], "dims");
    CHECK(dims && dims->count == 2);
    CHECK(tj_as_int(dims->items[0], &x) && x == -1);
    CHECK(tj_as_int(dims->items[1], &x) && x == 32);
    CHECK(strcmp(tj_as_string(
                     tj_get(tj_get(tj_get(v, "parameters"), "plugins"), "string_value")),
                 "a.so,b.so") == 0);
    CHECK(tj_get(v, "ok")->kind == TJ_BOOL && tj_get(v, "ok")->boolean == 1);
    CHECK(tj_get(v, "none")->kind == TJ_NULL);
    CHECK(tj_get(v, "f")->number == -1500.0 && !tj_get(v, "f")->is_int);
    CHECK(!tj_as_int(tj_get(v, "f"), &x) && !tj_as_int(tj_get(v, "name"), &x));
    CHECK(tj_get(v, "missing") == NULL && tj_get(in, "name") == NULL);

    /* Auto-complete's edits, and the writer's text parsed back. */
    CHECK(tj_set(v, "max_batch_size", tj_new_int(4)));
    CHECK(tj_append(dims, tj_new_int(7)));
    CHECK(tj_set(v, "added", tj_new_string("q\"\\\n\x01")));
    {
        size_t n = 0;
        char *text = tj_write(v, &n);
        tj_value *w = text ? tj_parse(text, n, err, sizeof err) : NULL;
        CHECK(text && strlen(text) == n);
        CHECK(w != NULL);
        if (w) {
            CHECK(tj_as_int(tj_get(w, "max_batch_size"), &x) && x == 4);
            CHECK(tj_get(tj_get(w, "input")->items[0], "dims")->count == 3);
            CHECK(strcmp(tj_as_string(tj_get(w, "added")), "q\"\\\n\x01") == 0);
            CHECK(tj_get(w, "f")->number == -1500.0);
            CHECK(strstr(text, "\"max_batch_size\":4") != NULL);
        }
        tj_free(w);
        free(text);
    }
    tj_free(v);
}

static void test_strings(void)
{
    char err[128];
    tj_value *v =
        parse("\"a\\u00e9\\u20ac\\ud83d\\ude00\\/\\b\\f\\n\\r\\t\"", err, sizeof err);
    CHECK(v && v->kind == TJ_STRING);
    if (v)
        CHECK(strcmp(v->string, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80/\b\f\n\r\t") == 0);
    tj_free(v);
    refuse("\"\\x\"", "bad escape");
    refuse("\"\\u12\"", "bad \\u escape");
    refuse("\"\\ud83d\"", "unpaired surrogate");
    refuse("\"\\ude00\"", "unpaired surrogate");
    refuse("\"\\ud83d\\u0041\"", "unpaired surrogate");
    refuse("\"abc", "unterminated string");
    refuse("\"a\nb\"", "control character");
}

static void test_malformed(void)
{
    char deep[200];
    refuse("", "unexpected end");
    refuse("{\"a\":1,}", "expected a member name");
    refuse("[1,2,]", "unexpected character");
    refuse("{\"a\" 1}", "expected ':'");
    refuse("[1 2]", "expected ',' or ']'");
    refuse("{\"a\":1 \"b\":2}", "expected ',' or '}'");
    refuse("01", "text after the value");
    refuse("-", "bad number");
    refuse("1.", "bad number");
    refuse("1e+", "bad number");
    refuse("tru", "unexpected character");
    refuse("-x", "bad number");
    refuse("{} {}", "text after the value");
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = 0;
    refuse(deep, "nested too deeply");
    {
        /* An integer beyond int64 is a number, not an integer. */
        char err[64];
        int64_t x;
        tj_value *v = parse("123456789012345678901234", err, sizeof err);
        CHECK(v && v->kind == TJ_NUMBER && !v->is_int && !tj_as_int(v, &x));
        tj_free(v);
    }
}

int main(void)
{
    test_config();
    test_strings();
    test_malformed();
    printf("test_json: %d checks, %d failed\n", checks, failed);
    return failed ? 1 : 0;
}
