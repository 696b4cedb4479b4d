/*
 * The table of host services handed to plugins (plugin.h,
 * prt_host_services): a plugin's log lines, errors and loops reach the
 * logger and error store (error.c) and the running context's thread pool
 * (parallel.c) through it.
 */
#include "base.h"
#include "parallel.h"

static void host_log(void *host, int32_t severity, const char *message)
{
    (void)host;
    base_log(severity, "%s", message ? message : "(null)");
}

static void host_set_error(void *host, prt_status status, const char *message)
{
    (void)host;
    (void)status;
    base_set_error_text(message ? message : "(null)");
}

/* A plugin's loops run on the pool of the context that is running it
 * (parallel.h), exactly as the built-in ops' do. */
static void host_parallel_for(void *host, int64_t n, int64_t grain, prt_range_fn fn,
                              void *arg)
{
    (void)host;
    if (fn)
        base_parallel_for(n, grain, fn, arg);
}

static int32_t host_nb_threads(void *host)
{
    (void)host;
    return base_parallel_threads();
}

static int32_t host_thread_index(void *host)
{
    (void)host;
    return base_parallel_thread_index();
}

static const prt_host_services host_services = {
    .struct_size = sizeof(prt_host_services),
    .abi_version = PRT_PLUGIN_ABI_VERSION,
    .host = NULL,
    .log = host_log,
    .set_error = host_set_error,
    .parallel_for = host_parallel_for,
    .nb_threads = host_nb_threads,
    .thread_index = host_thread_index,
};

const prt_host_services *prt_host_services_get(void)
{
    return &host_services;
}
