/*
 * What a kernel's code declares, read without loading it: the capability it
 * is for and the parameters of each entry. PTX is text (".entry name(
 * .param .u64 name_param_0, ...)"); a cubin is an ELF file whose
 * ".nv.info.<entry>" section lists each parameter's ordinal, offset and
 * size (attribute EIATTR_KPARAM_INFO). Both come from untrusted files:
 * every offset and count is checked before it is used.
 */
#include <stdio.h>
#include <string.h>

#include "kernel/kernel.h"

/* ---- PTX ----------------------------------------------------------------- */

static int is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$' || c == '.';
}

static const char *skip_space(const char *p, const char *end)
{
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
            p++;
        /* Comments may sit between the parameters. */
        if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
            while (p < end && *p != '\n')
                p++;
        } else if (end - p >= 2 && p[0] == '/' && p[1] == '*') {
            p += 2;
            while (end - p >= 2 && !(p[0] == '*' && p[1] == '/'))
                p++;
            p = end - p >= 2 ? p + 2 : end;
        } else {
            return p;
        }
    }
}

/* The next token: an identifier-like run or one punctuation character. */
static const char *token(const char *p, const char *end, const char **tend)
{
    p = skip_space(p, end);
    if (p >= end) {
        *tend = p;
        return p;
    }
    *tend = p + 1;
    if (is_ident(*p))
        while (*tend < end && is_ident(**tend))
            (*tend)++;
    return p;
}

static int tok_is(const char *t, const char *te, const char *s)
{
    size_t n = strlen(s);
    return (size_t)(te - t) == n && memcmp(t, s, n) == 0;
}

static int64_t parse_uint(const char *t, const char *te)
{
    int64_t v = 0;
    if (t == te)
        return -1;
    for (; t < te; t++) {
        if (*t < '0' || *t > '9' || v > (int64_t)1 << 40)
            return -1;
        v = v * 10 + (*t - '0');
    }
    return v;
}

/* Size and class of a PTX parameter type (".u64"), 0 if not one. */
static int32_t ptx_type_size(const char *t, const char *te, char *cls)
{
    static const struct {
        const char *name;
        int32_t size;
        char cls;
    } types[] = {{".u8", 1, 'u'},  {".s8", 1, 'u'},  {".b8", 1, 'b'},  {".u16", 2, 'u'},
                 {".s16", 2, 'u'}, {".b16", 2, 'b'}, {".f16", 2, 'f'}, {".u32", 4, 'u'},
                 {".s32", 4, 'u'}, {".b32", 4, 'b'}, {".f32", 4, 'f'}, {".u64", 8, 'u'},
                 {".s64", 8, 'u'}, {".b64", 8, 'b'}, {".f64", 8, 'f'}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (tok_is(t, te, types[i].name)) {
            *cls = types[i].cls;
            return types[i].size;
        }
    return 0;
}

/* Finds ".entry NAME" followed by "(" in the text. */
static const char *ptx_find_entry(const char *s, const char *end, const char *entry)
{
    size_t n = strlen(entry);
    const char *p = s;
    while (p < end) {
        const char *t, *te;
        t = token(p, end, &te);
        if (t >= end)
            return NULL;
        if (tok_is(t, te, ".entry")) {
            const char *nt, *nte;
            nt = token(te, end, &nte);
            if ((size_t)(nte - nt) == n && memcmp(nt, entry, n) == 0) {
                const char *pt, *pte;
                pt = token(nte, end, &pte);
                if (pt < end && *pt == '(')
                    return pte;
                /* An entry without parameters has no list. */
                return nte;
            }
        }
        p = te;
    }
    return NULL;
}

static prt_status ptx_params(const uint8_t *data, int64_t size, const char *entry,
                             kernel_param *out, int32_t cap, int32_t *count)
{
    const char *s = (const char *)data, *end = s + size;
    const char *p = ptx_find_entry(s, end, entry), *t, *te;
    int32_t n = 0;
    if (!p)
        return base_error(PRT_ERR_NOT_FOUND, "the PTX has no entry '%s'", entry);
    t = token(p, end, &te);
    /* Without "(" right after the name there are no parameters. */
    if (p > s && p[-1] != '(') {
        *count = 0;
        return PRT_OK;
    }
    if (t < end && *t == ')') {
        *count = 0;
        return PRT_OK;
    }
    for (;;) {
        kernel_param k;
        memset(&k, 0, sizeof k);
        k.align = 0;
        if (!tok_is(t, te, ".param"))
            return base_error(
                PRT_ERR_MALFORMED,
                "the PTX entry '%s': parameter %d does not start with .param", entry,
                (int)n);
        t = token(te, end, &te);
        if (tok_is(t, te, ".align")) {
            int64_t a;
            t = token(te, end, &te);
            a = parse_uint(t, te);
            if (a <= 0 || a > 4096)
                return base_error(PRT_ERR_MALFORMED,
                                  "the PTX entry '%s': parameter %d has a bad .align",
                                  entry, (int)n);
            k.align = (int32_t)a;
            t = token(te, end, &te);
        }
        k.size = ptx_type_size(t, te, &k.cls);
        if (!k.size)
            return base_error(PRT_ERR_MALFORMED,
                              "the PTX entry '%s': parameter %d has no type I know",
                              entry, (int)n);
        snprintf(k.type, sizeof k.type, "%.*s", (int)(te - t), t);
        /* State-space qualifiers of pointer parameters (.ptr .global
         * .align N) come before the name. */
        t = token(te, end, &te);
        while (tok_is(t, te, ".ptr") || tok_is(t, te, ".global") ||
               tok_is(t, te, ".const") || tok_is(t, te, ".local") ||
               tok_is(t, te, ".shared") || tok_is(t, te, ".align")) {
            int al = tok_is(t, te, ".align");
            t = token(te, end, &te);
            if (al)
                t = token(te, end, &te);
        }
        if (t >= end || !is_ident(*t))
            return base_error(PRT_ERR_MALFORMED,
                              "the PTX entry '%s': parameter %d has no name", entry,
                              (int)n);
        t = token(te, end, &te);
        if (t < end && *t == '[') {
            int64_t len;
            t = token(te, end, &te);
            len = parse_uint(t, te);
            t = token(te, end, &te);
            if (len <= 0 || len > 1 << 20 || t >= end || *t != ']')
                return base_error(
                    PRT_ERR_MALFORMED,
                    "the PTX entry '%s': parameter %d has a bad array length", entry,
                    (int)n);
            snprintf(k.type, sizeof k.type, "%s[%d]", k.cls == 'b' ? ".b8" : "?",
                     (int)len);
            k.size = (int32_t)(k.size * len);
            k.cls = 'a';
            t = token(te, end, &te);
        }
        if (!k.align)
            k.align = k.cls == 'a' ? 1 : k.size;
        if (n < cap)
            out[n] = k;
        n++;
        if (t < end && *t == ')')
            break;
        if (t >= end || *t != ',')
            return base_error(PRT_ERR_MALFORMED,
                              "the PTX entry '%s': the parameter list does not end",
                              entry);
        t = token(te, end, &te);
    }
    *count = n;
    return PRT_OK;
}

static prt_status ptx_arch(const uint8_t *data, int64_t size, int32_t *arch)
{
    const char *s = (const char *)data, *end = s + size, *p = s;
    while (p < end) {
        const char *t, *te;
        t = token(p, end, &te);
        if (t >= end)
            break;
        if (tok_is(t, te, ".target")) {
            const char *a, *ae;
            int64_t v;
            a = token(te, end, &ae);
            if (ae - a < 4 || memcmp(a, "sm_", 3) != 0)
                break;
            /* sm_90, sm_90a, sm_100f: the digits. */
            te = a + 3;
            while (te < ae && *te >= '0' && *te <= '9')
                te++;
            v = parse_uint(a + 3, te);
            if (v <= 0 || v > 10000)
                break;
            *arch = (int32_t)v;
            return PRT_OK;
        }
        p = te;
    }
    return base_error(PRT_ERR_MALFORMED, "the PTX has no .target sm_NN line");
}

/* ---- cubin (ELF) --------------------------------------------------------- */

#define ELF_EM_CUDA 190
#define NV_INFO_KPARAM 0x17 /* EIATTR_KPARAM_INFO */

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

typedef struct elf_view {
    const uint8_t *d;
    uint64_t size;
    uint64_t shoff;
    uint32_t shnum, shentsize, shstrndx;
} elf_view;

static prt_status elf_open(const uint8_t *d, int64_t size, elf_view *v)
{
    if (size < 64 || memcmp(d, "\177ELF", 4) != 0 || d[4] != 2 || d[5] != 1)
        return base_error(PRT_ERR_MALFORMED,
                          "the cubin is not a 64-bit little-endian ELF file");
    if (rd16(d + 18) != ELF_EM_CUDA)
        return base_error(PRT_ERR_MALFORMED,
                          "the cubin's ELF machine is %u, not CUDA (%u)", rd16(d + 18),
                          ELF_EM_CUDA);
    v->d = d;
    v->size = (uint64_t)size;
    v->shoff = rd64(d + 0x28);
    v->shentsize = rd16(d + 0x3a);
    v->shnum = rd16(d + 0x3c);
    v->shstrndx = rd16(d + 0x3e);
    if (v->shentsize < 64 || v->shnum == 0 || v->shstrndx >= v->shnum ||
        v->shoff > v->size || (uint64_t)v->shnum * v->shentsize > v->size - v->shoff)
        return base_error(PRT_ERR_MALFORMED,
                          "the cubin's section table is outside the file");
    return PRT_OK;
}

/* Section i's name offset, type, file offset and size, checked to lie in
 * the file. */
static int elf_section(const elf_view *v, uint32_t i, uint32_t *name, uint32_t *type,
                       uint64_t *off, uint64_t *size)
{
    const uint8_t *h = v->d + v->shoff + (uint64_t)i * v->shentsize;
    *name = rd32(h);
    *type = rd32(h + 4);
    *off = rd64(h + 0x18);
    *size = rd64(h + 0x20);
    if (*type == 8 /* SHT_NOBITS */)
        *size = 0;
    return *off <= v->size && *size <= v->size - *off;
}

/* The NUL-terminated string at `off` in section `strsec`, or NULL. */
static const char *elf_str(const elf_view *v, uint32_t strsec, uint32_t off)
{
    uint32_t nm, ty;
    uint64_t so, ss;
    if (!elf_section(v, strsec, &nm, &ty, &so, &ss) || off >= ss)
        return NULL;
    if (!memchr(v->d + so + off, 0, ss - off))
        return NULL;
    return (const char *)v->d + so + off;
}

static prt_status cubin_params(const uint8_t *d, int64_t size, const char *entry,
                               kernel_param *out, int32_t cap, int32_t *count)
{
    elf_view v;
    char want[KERNEL_MAX_ENTRY + 16];
    int found = 0;
    int32_t n = 0;
    prt_status st = elf_open(d, size, &v);
    if (st)
        return st;
    snprintf(want, sizeof want, ".nv.info.%s", entry);
    for (uint32_t i = 0; i < v.shnum; i++) {
        uint32_t nm, ty;
        uint64_t off, sz, at = 0;
        const char *name;
        if (!elf_section(&v, i, &nm, &ty, &off, &sz))
            return base_error(PRT_ERR_MALFORMED,
                              "the cubin's section %u is outside the file", i);
        name = elf_str(&v, v.shstrndx, nm);
        if (!name)
            return base_error(PRT_ERR_MALFORMED, "the cubin's section %u has no name", i);
        if (strcmp(name, want) != 0)
            continue;
        found = 1;
        /* Attributes: format byte, attribute byte, then a value whose size
         * the format gives (4: a 16-bit length and that many bytes). */
        while (at + 4 <= sz) {
            const uint8_t *a = d + off + at;
            uint32_t len = a[0] == 4 ? rd16(a + 2) : 0;
            if (a[0] == 4 && len > sz - at - 4)
                return base_error(PRT_ERR_MALFORMED,
                                  "the cubin's %s: an attribute runs past its section",
                                  want);
            if (a[0] == 4 && a[1] == NV_INFO_KPARAM && len >= 12) {
                uint32_t ordinal = rd16(a + 8), offset = rd16(a + 10);
                uint32_t psize = rd32(a + 12) >> 18;
                kernel_param k;
                if (ordinal >= KERNEL_MAX_ARGS)
                    return base_error(PRT_ERR_MALFORMED,
                                      "the cubin's %s: parameter ordinal %u", want,
                                      ordinal);
                memset(&k, 0, sizeof k);
                k.size = (int32_t)psize;
                /* The largest power of two (up to 8) dividing the offset. */
                k.align = 8;
                while (k.align > 1 && offset % (uint32_t)k.align)
                    k.align /= 2;
                snprintf(k.type, sizeof k.type, "%u bytes", psize);
                if ((int32_t)ordinal < cap)
                    out[ordinal] = k;
                if ((int32_t)ordinal + 1 > n)
                    n = (int32_t)ordinal + 1;
            }
            at += 4 + len;
        }
    }
    if (!found) {
        /* A kernel without parameters has no KPARAM entries but still an
         * info section; one without even that is not in this cubin unless
         * its symbol is. */
        for (uint32_t i = 0; i < v.shnum; i++) {
            uint32_t nm, ty, link;
            uint64_t off, sz;
            if (!elf_section(&v, i, &nm, &ty, &off, &sz) || ty != 2 /* SHT_SYMTAB */)
                continue;
            link = rd32(v.d + v.shoff + (uint64_t)i * v.shentsize + 0x28);
            for (uint64_t s = 0; s + 24 <= sz && link < v.shnum; s += 24) {
                const char *sym = elf_str(&v, link, rd32(d + off + s));
                if (sym && strcmp(sym, entry) == 0 && (d[off + s + 4] & 0xf) == 2)
                    found = 1;
            }
        }
        if (!found)
            return base_error(PRT_ERR_NOT_FOUND, "the cubin has no entry '%s'", entry);
    }
    *count = n;
    return PRT_OK;
}

static prt_status cubin_arch(const uint8_t *d, int64_t size, int32_t *arch)
{
    elf_view v;
    uint32_t flags;
    prt_status st = elf_open(d, size, &v);
    if (st)
        return st;
    flags = rd32(d + 0x30);
    /* ELF ABI version 8 and later keep the SM in bits 8..15 of e_flags,
     * earlier ones in bits 0..7. */
    *arch = (int32_t)(d[8] >= 8 ? (flags >> 8) & 0xff : flags & 0xff);
    if (*arch < 10)
        return base_error(PRT_ERR_MALFORMED, "the cubin's ELF flags name no SM (0x%x)",
                          flags);
    return PRT_OK;
}

prt_status kernel_code_params(const eng_kernel_code *c, const char *entry,
                              kernel_param *out, int32_t cap, int32_t *count)
{
    return c->kind == PRT_KERNEL_PTX
               ? ptx_params(c->data, c->size, entry, out, cap, count)
               : cubin_params(c->data, c->size, entry, out, cap, count);
}

prt_status kernel_code_arch(int32_t kind, const uint8_t *data, int64_t size,
                            int32_t *arch)
{
    return kind == PRT_KERNEL_PTX ? ptx_arch(data, size, arch)
                                  : cubin_arch(data, size, arch);
}
