/* Thread-local error messages and the logger. */
#include <stdio.h>
#include <string.h>

#include "base.h"
#include "plugin_label.h"

#define ERROR_CAP 2048

static _Thread_local char error_msg[ERROR_CAP];

static prt_log_fn log_fn;
static void *log_user;
static int32_t log_max = -1;

const char *prt_last_error(void)
{
    return error_msg;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if it is not one
 * (overlong forms, surrogates and code points past U+10FFFF are not). */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned min, cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, min = 0x80, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, min = 0x800, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, min = 0x10000, cp = c & 0x07;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* Messages carry names read from files and plugins (tensor, node, plugin
 * names), so a file could put terminal escapes or broken text on a user's
 * screen. Every message is stored with control bytes, C1 controls (U+0080
 * to U+009F: U+009B is CSI to some terminals) and bytes that are not valid
 * UTF-8 written as \xNN; other valid UTF-8 passes through. */
static void store_escaped(char *dst, size_t cap, const char *src)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0;
    while (*s && o + 1 < cap) {
        size_t n = utf8_len(s);
        if (n == 2 && s[0] == 0xc2 && s[1] <= 0x9f) {
            if (o + 8 >= cap)
                break;
            snprintf(dst + o, cap - o, "\\x%02x\\x%02x", s[0], s[1]);
            o += 8;
            s += 2;
        } else if (n == 1 && *s >= 0x20 && *s != 0x7f) {
            dst[o++] = (char)*s++;
        } else if (n > 1) {
            if (o + n >= cap)
                break;
            memcpy(dst + o, s, n);
            o += n;
            s += n;
        } else {
            if (o + 4 >= cap)
                break;
            snprintf(dst + o, cap - o, "\\x%02x", *s++);
            o += 4;
        }
    }
    dst[o] = '\0';
}

/* Formats into the thread's message, escaped. */
static void set_message(const char *fmt, va_list ap) BASE_PRINTF(1, 0);
static void set_message(const char *fmt, va_list ap)
{
    char raw[ERROR_CAP];
    vsnprintf(raw, sizeof raw, fmt, ap);
    store_escaped(error_msg, sizeof error_msg, raw);
}

void base_set_error_text(const char *message)
{
    store_escaped(error_msg, sizeof error_msg, message);
}

void base_clear_error(void)
{
    error_msg[0] = '\0';
}

void prt_clear_error(void)
{
    base_clear_error();
}

prt_status base_error(prt_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_message(fmt, ap);
    va_end(ap);
    /* Not logged: the caller gets the status and decides (many errors are
     * handled inside plugrt, e.g. a lookup that falls back). */
    return status;
}

prt_status base_error_prefix(prt_status status, const char *fmt, ...)
{
    char raw[512], prefix[512];
    char old[ERROR_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    store_escaped(prefix, sizeof prefix, raw);
    memcpy(old, error_msg, sizeof old);
    /* Truncation is fine: the message is for people. */
    {
        size_t n = strlen(prefix);
        if (n > sizeof error_msg - 3)
            n = sizeof error_msg - 3;
        memcpy(error_msg, prefix, n);
        error_msg[n] = ':';
        error_msg[n + 1] = ' ';
        old[sizeof old - n - 3] = '\0';
        memcpy(error_msg + n + 2, old, strlen(old) + 1);
    }
    return status;
}

const char *prt_status_name(prt_status status)
{
    static const char *const names[] = {"PRT_OK",
                                        "PRT_ERR_INVALID_ARGUMENT",
                                        "PRT_ERR_OUT_OF_MEMORY",
                                        "PRT_ERR_NOT_FOUND",
                                        "PRT_ERR_ALREADY_EXISTS",
                                        "PRT_ERR_UNSUPPORTED",
                                        "PRT_ERR_MALFORMED",
                                        "PRT_ERR_VERSION",
                                        "PRT_ERR_SHAPE",
                                        "PRT_ERR_PLUGIN",
                                        "PRT_ERR_IO",
                                        "PRT_ERR_STATE",
                                        "PRT_ERR_INTERNAL"};
    if (status < 0 || status >= (prt_status)(sizeof names / sizeof names[0]))
        return "PRT_ERR_UNKNOWN";
    return names[status];
}

void prt_set_logger(prt_log_fn fn, void *user, int32_t max_severity)
{
    log_fn = fn;
    log_user = user;
    log_max = fn ? max_severity : -1;
}

void base_log(int32_t severity, const char *fmt, ...)
{
    char raw[ERROR_CAP], msg[ERROR_CAP];
    va_list ap;
    if (!log_fn || severity > log_max)
        return;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    store_escaped(msg, sizeof msg, raw);
    log_fn(log_user, severity, msg);
}

prt_status base_plugin_status(prt_status st)
{
    return st > PRT_OK && st <= PRT_ERR_INTERNAL ? st : PRT_ERR_PLUGIN;
}

base_label base_plugin_label(const char *plugin_namespace, const char *name)
{
    base_label out;
    const char *ns = plugin_namespace ? plugin_namespace : "";
    if (strcmp(ns, PRT_BUILTIN_NAMESPACE) == 0)
        ns = ""; /* plugrt's own op: "Relu" says enough */
    snprintf(out.s, sizeof out.s, "%s%s%s", ns, ns[0] ? "::" : "", name ? name : "?");
    return out;
}

const char *prt_version_string(void)
{
    return PRT_VERSION;
}

int32_t prt_version_number(void)
{
    return PRT_VERSION_NUMBER;
}

prt_status base_query_check(uint32_t struct_size, size_t size, const void *out,
                            const char *fn, const char *type)
{
    if (!out)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    if (struct_size < size)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s: out->struct_size is %u; set it "
                          "to sizeof(%s) (%zu) before the call",
                          fn, (unsigned)struct_size, type, size);
    return PRT_OK;
}
