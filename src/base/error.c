/* Thread-local error messages, the logger, and the host services handed to
 * plugins. */
#include <stdio.h>
#include <string.h>

#include "base.h"

#define ERROR_CAP 2048

static _Thread_local char error_msg[ERROR_CAP];

static prt_log_fn log_fn;
static void *log_user;
static int32_t log_max = -1;

const char *prt_last_error(void) { return error_msg; }

void base_clear_error(void) { error_msg[0] = '\0'; }

void prt_clear_error(void) { base_clear_error(); }

prt_status base_error(prt_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_msg, sizeof error_msg, fmt, ap);
    va_end(ap);
    /* Not logged: the caller gets the status and decides (many errors are
     * handled inside plugrt, e.g. a lookup that falls back). */
    return status;
}

prt_status base_error_prefix(prt_status status, const char *fmt, ...)
{
    char prefix[512];
    char old[ERROR_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
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
    static const char *const names[] = {
        "PRT_OK",           "PRT_ERR_INVALID_ARGUMENT", "PRT_ERR_OUT_OF_MEMORY",
        "PRT_ERR_NOT_FOUND", "PRT_ERR_ALREADY_EXISTS",  "PRT_ERR_UNSUPPORTED",
        "PRT_ERR_MALFORMED", "PRT_ERR_VERSION",         "PRT_ERR_SHAPE",
        "PRT_ERR_PLUGIN",   "PRT_ERR_IO",               "PRT_ERR_STATE",
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
    char msg[ERROR_CAP];
    va_list ap;
    if (!log_fn || severity > log_max)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_fn(log_user, severity, msg);
}

const char *prt_version_string(void) { return PRT_VERSION; }

int32_t prt_version_number(void) { return PRT_VERSION_NUMBER; }

static void host_log(void *host, int32_t severity, const char *message)
{
    (void)host;
    base_log(severity, "%s", message ? message : "(null)");
}

static void host_set_error(void *host, prt_status status, const char *message)
{
    (void)host;
    (void)status;
    snprintf(error_msg, sizeof error_msg, "%s", message ? message : "(null)");
}

static const prt_host_services host_services = {
    sizeof(prt_host_services), PRT_PLUGIN_ABI_VERSION, NULL, host_log,
    host_set_error};

const prt_host_services *prt_host_services_get(void) { return &host_services; }
