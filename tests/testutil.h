/*
 * A small test harness shared by every test: checks that report file, line
 * and plugrt's last error, a deterministic random generator, and helpers to
 * load the standard plugin library. A test's main returns tu_finish().
 */
#ifndef PLUGRT_TESTUTIL_H
#define PLUGRT_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "plugrt/plugrt.h"

extern int tu_failures;
extern int tu_checks;

void tu_fail(const char *file, int line, const char *what);

/* CHECK(cond): records a failure (with prt_last_error()) and goes on. */
#define CHECK(cond)                                                        \
    do {                                                                   \
        tu_checks++;                                                       \
        if (!(cond))                                                       \
            tu_fail(__FILE__, __LINE__, #cond);                            \
    } while (0)
/* REQUIRE(cond): like CHECK, but returns from the calling function (which
 * must return int, non-zero meaning failure) when it fails. */
#define REQUIRE(cond)                                                      \
    do {                                                                   \
        tu_checks++;                                                       \
        if (!(cond)) {                                                     \
            tu_fail(__FILE__, __LINE__, #cond);                            \
            return 1;                                                      \
        }                                                                  \
    } while (0)
/* CHECK_OK(call): the call returns PRT_OK. */
#define CHECK_OK(call) CHECK((call) == PRT_OK)
#define REQUIRE_OK(call) REQUIRE((call) == PRT_OK)
/* CHECK_ERR(call, status, substring): fails with that status and a message
 * containing substring (NULL: any message, but not empty). */
#define CHECK_ERR(call, status, sub)                                       \
    tu_check_err((call), (status), (sub), __FILE__, __LINE__, #call)
void tu_check_err(prt_status got, prt_status want, const char *sub,
                  const char *file, int line, const char *what);

/* Prints a summary line and returns the process exit code. */
int tu_finish(const char *name);

/* Deterministic xorshift64* generator. */
typedef struct tu_rng {
    uint64_t s;
} tu_rng;
void tu_rng_seed(tu_rng *r, uint64_t seed);
uint64_t tu_rng_u64(tu_rng *r);
/* Uniform in [0, 1). */
double tu_rng_uniform(tu_rng *r);
/* Uniform integer in [lo, hi]. */
int64_t tu_rng_range(tu_rng *r, int64_t lo, int64_t hi);

/* A registry with the standard plugin library (PRT_PLUGINS_PATH) loaded.
 * NULL (and a recorded failure) if that fails. */
prt_registry *tu_registry_with_plugins(void);

/* Makes dims from a count and values. */
prt_dims tu_dims(int32_t nb, const int64_t *d);

/* Creates a plugin through the registry: fields may be NULL. NULL on error
 * (recorded). */
prt_plugin *tu_make_plugin(const prt_registry *reg, const char *ns,
                           const char *name, const char *version,
                           const prt_field *fields, int32_t nb_fields);

#endif /* PLUGRT_TESTUTIL_H */
