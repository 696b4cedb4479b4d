#include "testutil.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Atomic int tu_failures;
_Atomic int tu_checks;

void tu_fail(const char *file, int line, const char *what)
{
    tu_failures++;
    fprintf(stderr, "%s:%d: check failed: %s\n    last error: %s\n", file, line, what,
            prt_last_error());
}

void tu_check_err(prt_status got, prt_status want, const char *sub, const char *file,
                  int line, const char *what)
{
    const char *msg = prt_last_error();
    tu_checks++;
    if (got != want) {
        tu_failures++;
        fprintf(stderr, "%s:%d: %s returned %s, wanted %s\n    last error: %s\n", file,
                line, what, prt_status_name(got), prt_status_name(want), msg);
        return;
    }
    if ((sub && !strstr(msg, sub)) || (!sub && msg[0] == '\0')) {
        tu_failures++;
        fprintf(stderr, "%s:%d: %s: message lacks \"%s\"\n    message: %s\n", file, line,
                what, sub ? sub : "(anything)", msg);
    }
}

int tu_finish(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}

void tu_rng_seed(tu_rng *r, uint64_t seed)
{
    r->s = seed ? seed : 0x9e3779b97f4a7c15ull;
}

uint64_t tu_rng_u64(tu_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545f4914f6cdd1dull;
}

double tu_rng_uniform(tu_rng *r)
{
    return (double)(tu_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0);
}

int64_t tu_rng_range(tu_rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(tu_rng_u64(r) % (uint64_t)(hi - lo + 1));
}

prt_dims tu_dims(int32_t nb, const int64_t *d)
{
    prt_dims r;
    memset(&r, 0, sizeof r);
    r.nb_dims = nb;
    for (int32_t i = 0; i < nb; i++)
        r.d[i] = d[i];
    return r;
}

int64_t tu_volume(const prt_dims *d)
{
    int64_t v = 1;
    for (int32_t i = 0; i < d->nb_dims; i++)
        v *= d->d[i];
    return v;
}

double tu_half_to_double(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double s = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 0)
        return s * ldexp(m, -24);
    if (e == 31)
        return m ? NAN : s * INFINITY;
    return s * ldexp(1024 + m, e - 25);
}

uint16_t tu_rng_half(tu_rng *r, int max_exp)
{
    /* Drawn in this order (exponent, mantissa, sign) so that seeded tests
     * keep their data. */
    uint16_t e = (uint16_t)tu_rng_range(r, 0, max_exp);
    uint16_t m = (uint16_t)tu_rng_range(r, 0, 1023);
    uint16_t s = (uint16_t)(tu_rng_range(r, 0, 1) << 15);
    return (uint16_t)(s | (e << 10) | m);
}

static char watchdog_msg[160];

static void watchdog_fired(int sig)
{
    (void)sig;
    if (write(2, watchdog_msg, strlen(watchdog_msg)) < 0) {
        /* nothing more to do: the process ends either way */
    }
    _exit(1);
}

void tu_watchdog(const char *name, unsigned seconds)
{
    snprintf(watchdog_msg, sizeof watchdog_msg, "%s: timed out (an open blocked?)\n",
             name);
    signal(SIGALRM, seconds ? watchdog_fired : SIG_DFL);
    alarm(seconds);
}

void tu_require_cuda(const char *name)
{
    if (prt_device_check(PRT_DEVICE_CUDA) == PRT_OK)
        return;
    printf("%s: skipped: %s\n", name, prt_last_error());
    exit(TU_SKIP);
}
