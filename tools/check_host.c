/*
 * The checker as a plugin host: it opens the library itself (as the
 * registry does: dlopen, then the one entry point), hands it host services
 * that record every set_error, and wraps each call of a plugin entry so
 * that a failure without a message is noticed. Also the verdicts a check
 * gives and the random numbers it draws.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "text.h"

/* ---- host services ---------------------------------------------------------- */

static void host_log(void *host, int32_t severity, const char *message)
{
    chk_ctx *c = host;
    char buf[CLI_ESC_CAP];
    if (c && c->verbose && message)
        fprintf(stderr, "plugrt check: plugin log (%d): %s\n", (int)severity,
                cli_escape(message, buf, sizeof buf));
}

/* The context a thread's set_error calls go to, where not the library's
 * own (the threads check: each thread records its own calls). */
static _Thread_local chk_ctx *bound;

void chk_host_bind(chk_ctx *c)
{
    bound = c;
}

static void host_set_error(void *host, prt_status status, const char *message)
{
    chk_ctx *c = bound ? bound : host;
    if (!c)
        return;
    c->nb_errors++;
    c->error_status = status;
    snprintf(c->error, sizeof c->error, "%s", message ? message : "");
}

/* The checker's loops run on one thread, but split as a pool might split
 * them and in reverse order, so a plugin whose result depends on the
 * split or on the order of its ranges shows it in the checks that compare
 * runs (plugin.h: parallel_for). */
static void host_parallel_for(void *host, int64_t n, int64_t grain, prt_range_fn fn,
                              void *arg)
{
    int64_t chunk = grain > 1 ? grain : 1;
    (void)host;
    if (!fn || n <= 0)
        return;
    if (n / 3 > chunk)
        chunk = n / 3;
    /* Ranges of `chunk` from 0, the last one shorter, called last first. */
    for (int64_t begin = (n - 1) / chunk * chunk; begin >= 0; begin -= chunk)
        fn(arg, begin, begin + chunk < n ? begin + chunk : n);
}

static int32_t host_nb_threads(void *host)
{
    (void)host;
    return 1;
}

static int32_t host_thread_index(void *host)
{
    (void)host;
    return 0;
}

const prt_host_services *chk_host_services(chk_ctx *c)
{
    static prt_host_services services;
    services.struct_size = sizeof services;
    services.abi_version = PRT_PLUGIN_ABI_VERSION;
    services.host = c;
    services.log = host_log;
    services.set_error = host_set_error;
    services.parallel_for = host_parallel_for;
    services.nb_threads = host_nb_threads;
    services.thread_index = host_thread_index;
    return &services;
}

/* The entry point prt_check_main was given (check_python.c), which each
 * child calls instead of opening a file: Python plugins have none. */
static prt_plugin_entry_fn given_entry;

void chk_library_give_entry(prt_plugin_entry_fn entry)
{
    given_entry = entry;
}

int chk_library_is_given(void)
{
    return given_entry != NULL;
}

int chk_library_open(chk_ctx *c, char *msg, size_t cap)
{
    prt_plugin_entry_fn entry;
    void *sym;
    if (given_entry) {
        c->handle = NULL;
        entry = given_entry;
        goto call_entry;
    }
    dlerror();
    c->handle = dlopen(c->lib_path, RTLD_NOW | RTLD_LOCAL);
    if (!c->handle) {
        const char *why = dlerror();
        snprintf(msg, cap, "dlopen fails: %s", why ? why : "unknown error");
        return -1;
    }
    dlerror();
    sym = dlsym(c->handle, PRT_PLUGIN_ENTRY_SYMBOL);
    if (!sym) {
        snprintf(msg, cap, "the library does not export %s", PRT_PLUGIN_ENTRY_SYMBOL);
        return -1;
    }
    /* POSIX: a data pointer from dlsym converts to a function pointer. */
    entry = (prt_plugin_entry_fn)sym;
call_entry:
    c->entry = entry;
    chk_call_begin(c, "%s(%u)", PRT_PLUGIN_ENTRY_SYMBOL,
                   (unsigned)PRT_PLUGIN_ABI_VERSION);
    c->lib = entry(PRT_PLUGIN_ABI_VERSION, chk_host_services(c));
    chk_call_end(c, PRT_OK);
    if (!c->lib) {
        snprintf(msg, cap, "the entry point refuses plugin ABI %u%s%s",
                 (unsigned)PRT_PLUGIN_ABI_VERSION, c->nb_errors ? ": " : "",
                 c->nb_errors ? c->error : "");
        return -1;
    }
    return 0;
}

/* ---- calls ----------------------------------------------------------------- */

void chk_call_begin(chk_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->call, sizeof c->call, fmt, ap);
    va_end(ap);
    snprintf(c->sh->doing, sizeof c->sh->doing, "%s", c->call);
    c->sh->in_call = 1;
    c->nb_errors = 0;
    c->error_status = PRT_OK;
    c->error[0] = '\0';
}

static void note_silent(chk_ctx *c, const char *fmt, ...) CLI_PRINTF(2, 3);
static void note_silent(chk_ctx *c, const char *fmt, ...)
{
    va_list ap;
    if (c->sh->nb_silent++ > 0)
        return;
    va_start(ap, fmt);
    vsnprintf(c->sh->silent, sizeof c->sh->silent, fmt, ap);
    va_end(ap);
}

prt_status chk_call_end(chk_ctx *c, prt_status st)
{
    c->sh->in_call = 0;
    if (st == PRT_OK)
        return st;
    if (st < 0 || st > PRT_ERR_INTERNAL)
        note_silent(c, "%s returned %d, which is no prt_status", c->call, (int)st);
    else if (c->nb_errors == 0 || !c->error[0])
        note_silent(c, "%s failed (%s) without a message: set_error was %s", c->call,
                    prt_status_name(st), c->nb_errors ? "given \"\"" : "not called");
    else if (c->error_status != st)
        note_silent(c, "%s returned %s but told set_error %s (\"%s\")", c->call,
                    prt_status_name(st), prt_status_name(c->error_status), c->error);
    return st;
}

const char *chk_call_error(const chk_ctx *c)
{
    return c->nb_errors && c->error[0] ? c->error : "(no message)";
}

/* ---- verdicts -------------------------------------------------------------- */

int chk_failed(const chk_ctx *c)
{
    return c->sh->result.verdict == CHK_FAIL;
}

static void set_verdict(chk_ctx *c, int32_t verdict, const char *fmt, va_list ap)
{
    chk_result *r = &c->sh->result;
    if (r->verdict == CHK_FAIL)
        return;
    r->verdict = verdict;
    vsnprintf(r->message, sizeof r->message, fmt, ap);
}

void chk_fail(chk_ctx *c, const char *fmt, ...)
{
    va_list ap;
    if (chk_failed(c))
        return;
    va_start(ap, fmt);
    set_verdict(c, CHK_FAIL, fmt, ap);
    va_end(ap);
}

void chk_fail_at(chk_ctx *c, const char *shape, int32_t tactic, const char *tensor,
                 int64_t element, const char *fmt, ...)
{
    chk_result *r = &c->sh->result;
    va_list ap;
    if (chk_failed(c))
        return;
    va_start(ap, fmt);
    set_verdict(c, CHK_FAIL, fmt, ap);
    va_end(ap);
    snprintf(r->shape, sizeof r->shape, "%s", shape ? shape : "");
    snprintf(r->tensor, sizeof r->tensor, "%s", tensor ? tensor : "");
    r->tactic = tactic;
    r->element = element;
}

void chk_pass(chk_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_verdict(c, CHK_PASS, fmt, ap);
    va_end(ap);
}

void chk_skip(chk_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_verdict(c, CHK_SKIP, fmt, ap);
    va_end(ap);
}

int chk_say(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    return -1;
}

const char *chk_string_problem(const char *s, size_t max)
{
    size_t n;
    if (!s)
        return "is NULL";
    n = strnlen(s, max);
    if (n == max)
        return "is not NUL-terminated within a sane length";
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return "holds a control character";
    return NULL;
}

/* ---- random numbers: splitmix64 ----------------------------------------------- */

uint64_t chk_rand(chk_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int64_t chk_rand_range(chk_rng *r, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + (int64_t)(chk_rand(r) % (uint64_t)(hi - lo + 1));
}

void chk_rng_init(chk_rng *r, uint64_t seed, uint64_t stream)
{
    r->s = seed * 0x2545f4914f6cdd1dull + stream * 0x9e3779b97f4a7c15ull + 1;
    (void)chk_rand(r);
}
