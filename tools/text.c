/* UTF-8 validation and escaping of names for the terminal. */
#include "text.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

size_t cli_utf8_next(const unsigned char *s, size_t n, unsigned *out_cp)
{
    size_t len;
    uint32_t cp;
    if (s[0] < 0x80) {
        *out_cp = s[0];
        return 1;
    }
    if ((s[0] & 0xe0) == 0xc0) {
        len = 2;
        cp = s[0] & 0x1fu;
    } else if ((s[0] & 0xf0) == 0xe0) {
        len = 3;
        cp = s[0] & 0x0fu;
    } else if ((s[0] & 0xf8) == 0xf0) {
        len = 4;
        cp = s[0] & 0x07u;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
        (len == 4 && cp < 0x10000) || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    *out_cp = cp;
    return len;
}

int cli_is_control(unsigned cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

/* Bytes the escaped form of the sequence at s takes: len bytes of code
 * point cp, or one invalid byte when len is 0. */
static size_t escaped_size(const unsigned char *s, size_t len, unsigned cp)
{
    if (len == 0)
        return 4;
    if (s[0] == '\\')
        return 2;
    return cli_is_control(cp) ? 4 * len : len;
}

const char *cli_escape(const char *str, char *buf, size_t cap)
{
    static const char ellipsis[] = "...";
    const unsigned char *s = (const unsigned char *)str;
    size_t n, i, o = 0;
    int clean = 1;
    if (!str)
        return "(null)";
    n = strlen(str);
    for (i = 0; i < n && clean;) {
        unsigned cp = 0;
        size_t len = cli_utf8_next(s + i, n - i, &cp);
        clean = len > 0 && escaped_size(s + i, len, cp) == len;
        i += len ? len : 1;
    }
    if (clean)
        return str;
    if (cap < sizeof ellipsis)
        return cap ? (buf[0] = '\0', buf) : ellipsis;
    for (i = 0; i < n;) {
        unsigned cp = 0;
        size_t len = cli_utf8_next(s + i, n - i, &cp),
               need = escaped_size(s + i, len, cp);
        size_t take = len ? len : 1;
        /* Keep room for the ellipsis unless this is the last sequence. */
        if (o + need + (i + take < n ? sizeof ellipsis - 1 : 0) >= cap) {
            memcpy(buf + o, ellipsis, sizeof ellipsis);
            return buf;
        }
        if (need == take) {
            memcpy(buf + o, s + i, take);
            o += take;
        } else if (s[i] == '\\') {
            buf[o++] = '\\';
            buf[o++] = '\\';
        } else {
            for (size_t k = 0; k < take; k++)
                o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", s[i + k]);
        }
        i += take;
    }
    buf[o] = '\0';
    return buf;
}
