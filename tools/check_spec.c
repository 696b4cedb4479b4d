/* Input specs (check_spec.h). */
#include "check_spec.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_NAME_MAX 32 /* a symbol's name */
/* The largest dim a spec may name: far past what a check allocates, far
 * below what overflows a volume. */
#define SPEC_DIM_MAX ((int64_t)1 << 31)

typedef struct spec_parser {
    chk_sig *sig;
    char names[CHK_MAX_SYMS][SPEC_NAME_MAX]; /* "" for a literal's symbol */
    int32_t bounded[CHK_MAX_SYMS];
} spec_parser;

static int is_name(const char *s, size_t n)
{
    if (n == 0 || n >= SPEC_NAME_MAX || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_')
            return 0;
    return 1;
}

/* A non-negative integer of n bytes; -1 if it is not one. */
static int64_t number(const char *s, size_t n)
{
    int64_t v = 0;
    if (n == 0 || n > 12)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v <= SPEC_DIM_MAX ? v : -1;
}

/* The symbol named s[0..n), made when new; -1 when there is no room. */
static int32_t symbol(spec_parser *p, const char *s, size_t n)
{
    chk_sig *sig = p->sig;
    for (int32_t k = 0; k < sig->nb_syms; k++)
        if (strlen(p->names[k]) == n && memcmp(p->names[k], s, n) == 0)
            return k;
    if (sig->nb_syms >= CHK_MAX_SYMS)
        return -1;
    memcpy(p->names[sig->nb_syms], s, n);
    p->names[sig->nb_syms][n] = '\0';
    sig->sym_lo[sig->nb_syms] = 0;
    sig->sym_hi[sig->nb_syms] = SPEC_DIM_MAX;
    return sig->nb_syms++;
}

static int32_t dtype_named(const char *s, size_t n)
{
    for (int32_t t = 0; t < PRT_DTYPE_COUNT; t++) {
        const char *name = prt_dtype_name(t);
        if (name && strlen(name) == n && memcmp(name, s, n) == 0)
            return t;
    }
    return -1;
}

/* NAME:DTYPE:DIMS */
static int parse_input(spec_parser *p, const char *item, size_t n, char *why, size_t cap)
{
    chk_sig *sig = p->sig;
    const char *c1 = memchr(item, ':', n), *c2, *dims, *end = item + n;
    int32_t i = sig->nb_in, t;
    if (!c1 || !(c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1))))
        return chk_say(why, cap, "'%.*s' is neither NAME:DTYPE:DIMS nor SYMBOL=LO..HI",
                       (int)n, item);
    if (i >= CHK_MAX_IN)
        return chk_say(why, cap, "more than %d inputs", CHK_MAX_IN);
    if (c1 == item)
        return chk_say(why, cap, "'%.*s': the input has no name", (int)n, item);
    t = dtype_named(c1 + 1, (size_t)(c2 - c1 - 1));
    if (t < 0)
        return chk_say(why, cap,
                       "'%.*s': unknown dtype '%.*s' (float32, float16, int32, ...)",
                       (int)n, item, (int)(c2 - c1 - 1), c1 + 1);
    sig->types[i] = t;
    dims = c2 + 1;
    if ((size_t)(end - dims) == 6 && memcmp(dims, "scalar", 6) == 0)
        dims = end;
    while (dims < end) {
        const char *x = memchr(dims, 'x', (size_t)(end - dims));
        size_t len = (size_t)((x ? x : end) - dims);
        int64_t v = number(dims, len);
        int32_t s;
        if (sig->ranks[i] >= PRT_MAX_DIMS)
            return chk_say(why, cap, "'%.*s': more than %d dims", (int)n, item,
                           PRT_MAX_DIMS);
        if (v < 0 && len > 0 && isdigit((unsigned char)dims[0]))
            return chk_say(why, cap, "'%.*s': dim '%.*s' is not a number up to %lld",
                           (int)n, item, (int)len, dims, (long long)SPEC_DIM_MAX);
        if (v < 0 && !is_name(dims, len))
            return chk_say(why, cap,
                           "'%.*s': dim '%.*s' is neither a number nor a symbol name",
                           (int)n, item, (int)len, dims);
        if (v >= 0) {
            if (sig->nb_syms >= CHK_MAX_SYMS)
                return chk_say(why, cap, "too many dims");
            s = sig->nb_syms++;
            p->names[s][0] = '\0';
            sig->sym_lo[s] = sig->sym_hi[s] = v;
        } else if ((s = symbol(p, dims, len)) < 0) {
            return chk_say(why, cap, "too many dims");
        }
        sig->sym[i][sig->ranks[i]++] = (int8_t)s;
        if (!x)
            break;
        dims = x + 1;
        if (dims == end)
            return chk_say(why, cap, "'%.*s': a dim is missing after the last 'x'",
                           (int)n, item);
    }
    sig->nb_in++;
    return 0;
}

/* SYMBOL=LO..HI or SYMBOL=V */
static int parse_range(spec_parser *p, const char *item, size_t n, char *why, size_t cap)
{
    const char *eq = memchr(item, '=', n), *end = item + n, *dots;
    int64_t lo, hi;
    int32_t s = -1;
    for (int32_t k = 0; k < p->sig->nb_syms; k++)
        if (p->names[k][0] && strlen(p->names[k]) == (size_t)(eq - item) &&
            memcmp(p->names[k], item, (size_t)(eq - item)) == 0)
            s = k;
    if (s < 0)
        return chk_say(why, cap,
                       "'%.*s': no input has the dim '%.*s' (give the inputs first)",
                       (int)n, item, (int)(eq - item), item);
    dots = strstr(eq + 1, "..");
    if (dots && dots < end) {
        lo = number(eq + 1, (size_t)(dots - eq - 1));
        hi = number(dots + 2, (size_t)(end - dots - 2));
    } else {
        lo = hi = number(eq + 1, (size_t)(end - eq - 1));
    }
    if (lo < 0 || hi < lo)
        return chk_say(why, cap, "'%.*s': the range must be LO..HI with 0 <= LO <= HI",
                       (int)n, item);
    if (p->bounded[s]++)
        return chk_say(why, cap, "'%.*s': %s is bounded twice", (int)n, item,
                       p->names[s]);
    p->sig->sym_lo[s] = lo;
    p->sig->sym_hi[s] = hi;
    return 0;
}

int chk_spec_parse(const char *text, chk_sig *sig, char *why, size_t cap)
{
    spec_parser p;
    char *copy, *s;
    size_t len = 0;
    int rc = 0;
    memset(&p, 0, sizeof p);
    memset(sig, 0, sizeof *sig);
    p.sig = sig;
    sig->rel = CHK_REL_SPEC;
    if (!text || !text[0])
        return chk_say(why, cap, "the input spec is empty");
    /* Spaces mean nothing in a spec ("N = 1..8"): they go first. */
    if (!(copy = malloc(strlen(text) + 1)))
        return chk_say(why, cap, "out of memory");
    for (const char *t = text; *t; t++)
        if (!isspace((unsigned char)*t))
            copy[len++] = *t;
    copy[len] = '\0';
    for (s = copy; rc == 0 && *s;) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        rc = memchr(s, '=', n) ? parse_range(&p, s, n, why, cap)
                               : parse_input(&p, s, n, why, cap);
        if (!comma)
            break;
        s += n + 1;
    }
    free(copy);
    if (rc == 0 && sig->nb_in == 0)
        return chk_say(why, cap, "the input spec names no input (NAME:DTYPE:DIMS)");
    return rc;
}
