/*
 * A small test harness shared by every test: checks that report file, line
 * and plugrt's last error, a deterministic random generator, float16 test
 * data, helpers to load the standard plugin library, build a one-plugin
 * network into a loaded engine, and capture an output allocator's calls. A
 * test's main returns tu_finish().
 */
#ifndef PLUGRT_TESTUTIL_H
#define PLUGRT_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "plugrt/plugrt.h"

extern _Atomic int tu_failures; /* atomic: tests may check from threads */
extern _Atomic int tu_checks;

void tu_fail(const char *file, int line, const char *what);

/* CHECK(cond): records a failure (with prt_last_error()) and goes on. */
#define CHECK(cond)                                                                      \
    do {                                                                                 \
        tu_checks++;                                                                     \
        if (!(cond))                                                                     \
            tu_fail(__FILE__, __LINE__, #cond);                                          \
    } while (0)
/* REQUIRE(cond): like CHECK, but returns from the calling function (which
 * must return int, non-zero meaning failure) when it fails. */
#define REQUIRE(cond)                                                                    \
    do {                                                                                 \
        tu_checks++;                                                                     \
        if (!(cond)) {                                                                   \
            tu_fail(__FILE__, __LINE__, #cond);                                          \
            return 1;                                                                    \
        }                                                                                \
    } while (0)
/* CHECK_OK(call): the call returns PRT_OK. */
#define CHECK_OK(call) CHECK((call) == PRT_OK)
#define REQUIRE_OK(call) REQUIRE((call) == PRT_OK)
/* CHECK_ERR(call, status, substring): fails with that status and a message
 * containing substring (NULL: any message, but not empty). */
#define CHECK_ERR(call, status, sub)                                                     \
    tu_check_err((call), (status), (sub), __FILE__, __LINE__, #call)
void tu_check_err(prt_status got, prt_status want, const char *sub, const char *file,
                  int line, const char *what);

/* Prints a summary line and returns the process exit code. */
int tu_finish(const char *name);

/* A call that may block forever if broken (an open of a FIFO waiting for a
 * writer): tu_watchdog(name, seconds) before it ends the process with a
 * failure after `seconds` instead of leaving a hung test; tu_watchdog(name,
 * 0) after it cancels that. */
void tu_watchdog(const char *name, unsigned seconds);

/* Exit status CTest reads as "skipped" (SKIP_RETURN_CODE). */
#define TU_SKIP 77
/* For the CUDA suite: returns when CUDA is usable here; otherwise prints
 * "<name>: skipped: <why>" and exits with TU_SKIP. */
void tu_require_cuda(const char *name);

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

/* A registry with the standard plugin library (PRT_PLUGINS_PATH, or
 * $PLUGRT_PLUGINS when set) loaded.
 * NULL (and a recorded failure) if that fails. */
prt_registry *tu_registry_with_plugins(void);

/* Makes dims from a count and values. */
prt_dims tu_dims(int32_t nb, const int64_t *d);
/* Number of elements: the product of the dims (1 for rank 0). */
int64_t tu_volume(const prt_dims *d);

/* float16 for test data, written plainly and apart from the library so that
 * references do not share its bugs. The exact value of a half (every half is
 * exact in a double): */
double tu_half_to_double(uint16_t h);
/* A random finite half: any sign, exponent field 0..max_exp (at most 30),
 * any mantissa. max_exp 25 keeps magnitudes below 2^11. */
uint16_t tu_rng_half(tu_rng *r, int max_exp);

/* Finds a creator (borrowed from the registry). NULL on error (recorded). */
const prt_plugin_creator *tu_find_creator(const prt_registry *reg, const char *ns,
                                          const char *name, const char *version);

/* Creates a plugin through the registry: fields may be NULL. NULL on error
 * (recorded). */
prt_plugin *tu_make_plugin(const prt_registry *reg, const char *ns, const char *name,
                           const char *version, const prt_field *fields,
                           int32_t nb_fields);

/* ---- one plugin layer, built and loaded back ------------------------------ */

/* A network input. dims may hold -1; then min/opt/max (all three, or all
 * NULL) bound it in the one optimization profile the build makes. */
typedef struct tu_input_spec {
    const char *name;
    int32_t dtype;
    const prt_dims *dims;
    const prt_dims *min, *opt, *max;
} tu_input_spec;

/* What tu_build_roundtrip makes. All NULL after a failure, so
 * tu_engine_destroy is always safe. */
typedef struct tu_engine {
    prt_engine *built;  /* as the builder made it */
    prt_engine *engine; /* built, serialized and deserialized again */
    prt_context *ctx;   /* on `engine` */
} tu_engine;

/* Most inputs and outputs tu_build_roundtrip takes. */
#define TU_MAX_IO 16

/* Builds inputs -> plugin -> outputs: every input feeds the plugin in order;
 * the plugin's output i is named out_names[i] and marked, for i < nb_out. A
 * profile is added when an input has min/opt/max; autotune goes to the
 * config. Then serializes, deserializes through `reg` and makes a context.
 * `plugin` (PRT_PHASE_BUILD; NULL gives PRT_ERR_PLUGIN, for a failed
 * tu_make_plugin) is owned by the call whether it succeeds or fails. Returns
 * the status of the first failing step, its message left in
 * prt_last_error(), so tests of build errors can check it. */
PRT_NODISCARD prt_status tu_build_roundtrip(prt_registry *reg, prt_plugin *plugin,
                                            const tu_input_spec *in, int nb_in,
                                            const char *const *out_names, int nb_out,
                                            int autotune, tu_engine *out);
/* Destroys the context and both engines; sets them to NULL. */
void tu_engine_destroy(tu_engine *e);

/* ---- an output allocator that records what it was asked ------------------- */

typedef struct tu_capture {
    void *mem; /* malloc'd: the caller frees it with free() */
    uint64_t size;
    int reallocs;
    int notified;
    prt_dims dims; /* the last notified shape */
} tu_capture;

/* Zeroes *cap and returns an allocator recording into it: reallocate keeps
 * `current` when it is big enough and otherwise allocates exactly `size`
 * bytes anew; notify_shape stores the dims. */
prt_output_allocator tu_capture_allocator(tu_capture *cap);

#endif /* PLUGRT_TESTUTIL_H */
