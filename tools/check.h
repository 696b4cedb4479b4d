/*
 * plugrt check: the plugin-contract checker (cmd_check.c and check_*.c).
 *
 * The checker loads a plugin library itself (dlopen, the entry point, the
 * creators), with host services of its own that record every set_error,
 * and drives each plugin's entries the way the builder and the runtime
 * would, through an expression builder of its own (check_expr.c). It does
 * not build engines: a check must control what each entry sees (later
 * positions changed under supports_format_combination, guard bytes around
 * every buffer, clones and contexts used in orders no engine makes) and
 * must name the contract that broke, where an engine would hide the plugin
 * behind the builder's and the runtime's own checks (the runtime reports a
 * broken size bound as a failed run and clamps it) and place buffers side
 * by side in one arena, where nothing can stand guard between them.
 *
 * Every check runs in a child process of its own (check_sandbox.c): a
 * plugin that crashes or hangs fails that check, and the checker goes on.
 * A child reports through a block of shared memory (chk_shared).
 *
 * The plugin runs on the CPU or, with --device cuda, on CUDA (c->device):
 * the same checks, every buffer guarded and poisoned on the device too
 * (check_case.h, check_transfer.c), plus the stream check and the
 * reference check, CUDA against the CPU. Only children use a device.
 */
#ifndef PLUGRT_TOOLS_CHECK_H
#define PLUGRT_TOOLS_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/* ---- limits, each named once --------------------------------------------- */

#define CHK_MAX_IN 8    /* inputs tried when finding what a plugin takes */
#define CHK_MAX_SHAPE 3 /* shape inputs tried when nothing runs without */
/* Arrays of concrete dims hold the inputs' dims, then each shape input's
 * values as a prt_dims (nb_dims values, at most PRT_MAX_DIMS). */
#define CHK_MAX_DIMSETS (CHK_MAX_IN + CHK_MAX_SHAPE)
#define CHK_MAX_OUT 64 /* plugin.h: nb_outputs is 1..64 */
#define CHK_MAX_IO (CHK_MAX_IN + CHK_MAX_OUT)
#define CHK_NAME_MAX 256    /* a sane name, version or namespace is shorter */
#define CHK_DOC_MAX 4096    /* a sane field doc is shorter */
#define CHK_MAX_SCHEMA 1024 /* a sane number of fields in a schema */
#define CHK_MAX_TACTICS 1024
#define CHK_MAX_SIGS 16      /* input signatures tested per plugin */
#define CHK_MAX_CREATORS 128 /* creators checked per library */
#define CHK_INFO_FIELDS 64   /* schema entries the parent learns per creator */
#define CHK_VOLUME_CAP 4096  /* elements of the largest random tensor */
#define CHK_DIM_CAP 64       /* the largest random dim */
#define CHK_VALUE_CAP 4      /* the largest random shape-input value */
#define CHK_GUARD 256        /* guard bytes on each side of every buffer */
#define CHK_MSG 1024
#define CHK_MAX_SYMS (CHK_MAX_IN * PRT_MAX_DIMS) /* dim symbols of an input spec */

/* `plugrt check` exits with this when nothing failed but a creator that
 * can be created had nothing of it run (no input signature ran, or its
 * fields were refused); 1 stays "a check failed", 2 usage.
 * --allow-untested turns it back into 0. */
#define CHK_EXIT_UNTESTED 3

/* Tolerances when two runs of a plugin are compared: integers exactly,
 * floats as the builder compares tactics (builder/tune.c) when the runs
 * are on one device (CHK_TOL_SAME), and a little wider, with an absolute
 * floor for results near 0, when one ran on CUDA and one on the CPU
 * (CHK_TOL_DEVICES: another order of sums, fused multiply-adds). */
#define CHK_RTOL_F32 1e-4
#define CHK_RTOL_F16 1e-2
#define CHK_RTOL_BF16 2e-2
#define CHK_ATOL 1e-6
#define CHK_DEV_RTOL_F32 1e-4
#define CHK_DEV_ATOL_F32 1e-5
#define CHK_DEV_RTOL_F16 1e-2
#define CHK_DEV_ATOL_F16 1e-3
#define CHK_DEV_RTOL_BF16 2e-2
#define CHK_DEV_ATOL_BF16 1e-2
enum { CHK_TOL_SAME = 0, CHK_TOL_DEVICES = 1 };

/* The repeat check: runs of each case after its reference, two of the same
 * shapes in a row, then two of another case's (check_runtime.c). */
#define CHK_REPEAT_RUNS 12
/* The threads check: runs each of two threads makes while the other runs. */
#define CHK_THREAD_RUNS 16
/* The stream check: the device-to-device copies queued on the stream
 * before a run, which keep it busy for about half a millisecond (16 copies
 * of 64 MiB on an H200), far longer than a plugin's kernel takes to start
 * on any other stream. */
#define CHK_GATE_BYTES ((size_t)64 << 20)
#define CHK_GATE_COPIES 16

/* Bytes up to and including `member`: the least struct_size that covers
 * it. */
#define CHK_END_OF(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

/* An entry of a plugin's table, or NULL when it is NULL or past the
 * table's struct_size (a table built against an older header). */
#define CHK_ENTRY(tbl, type, m)                                                          \
    ((tbl) && (size_t)(tbl)->struct_size >= CHK_END_OF(type, m) ? (tbl)->m : NULL)
#define CHK_BUILD(p, m) CHK_ENTRY((p)->vt->build, prt_plugin_build, m)
#define CHK_RUNTIME(p, m) CHK_ENTRY((p)->vt->runtime, prt_plugin_runtime, m)

/* ---- what a check reports -------------------------------------------------- */

typedef enum chk_verdict { CHK_NONE = 0, CHK_PASS, CHK_FAIL, CHK_SKIP } chk_verdict;

typedef struct chk_result {
    int32_t verdict;
    char message[CHK_MSG];
    /* Where a failure was seen; empty / -1 when it does not apply. */
    char shape[512]; /* "in0 float32 3x4, in1 float32 3x4" */
    int32_t tactic;
    char tensor[32]; /* "out0", "in1", "workspace" */
    int64_t element;
} chk_result;

/* What the library child tells the parent about each creator. */
typedef struct chk_schema_info {
    char name[128];
    int32_t type;
    int64_t length;
} chk_schema_info;

typedef struct chk_creator_info {
    char ns[CHK_NAME_MAX], name[CHK_NAME_MAX], version[CHK_NAME_MAX];
    int32_t nb_fields; /* entries in fields[] (at most CHK_INFO_FIELDS) */
    chk_schema_info fields[CHK_INFO_FIELDS];
} chk_creator_info;

typedef struct chk_library_info {
    int32_t nb_creators; /* recorded, at most CHK_MAX_CREATORS */
    int32_t total;       /* the library's count */
    chk_creator_info creators[CHK_MAX_CREATORS];
} chk_library_info;

/* How the dims of several inputs relate when profiles and shapes are
 * drawn (check_layer.c): each input's dims drawn apart; the shorter
 * inputs' dims equal to the longest's trailing dims (elementwise ops), or
 * to its leading dims (data [N, D] beside ids [N]); broadcast (the
 * shorter inputs' last dim equal to the longest's last, their other dims
 * 1); or an input spec's symbols (--inputs). */
enum {
    CHK_REL_INDEPENDENT = 0,
    CHK_REL_TRAILING,
    CHK_REL_LEADING,
    CHK_REL_BROADCAST,
    CHK_REL_SPEC
};

/* One combination of inputs a plugin accepts. */
typedef struct chk_sig {
    int32_t nb_in;
    int32_t types[CHK_MAX_IN];
    int32_t ranks[CHK_MAX_IN];
    /* 1: get_output_shapes refuses symbolic input dims (or shape-input
     * values), so every shape is built with constants (a network input of
     * static shape, shape inputs that are constants). */
    int32_t static_dims;
    /* Shape inputs (prt_network_add_plugin's shape_inputs): how many, and
     * how many values each has. Their values are symbols with bounds in
     * the profile, as a network input's values are, drawn per case. */
    int32_t nb_shape;
    int32_t shape_len[CHK_MAX_SHAPE];
    /* The relation of the inputs' dims (CHK_REL_*) discovery found the
     * plugin to need; CHK_REL_INDEPENDENT when it accepts dims drawn
     * apart (then the checks also try them tied by trailing dims). */
    int32_t rel;
    /* With CHK_REL_SPEC: each dim's symbol, and each symbol's range
     * (a literal dim is a symbol of its own with lo == hi; lo 0: profiles
     * start at 1 and only the empty-inputs check draws a 0). */
    int8_t sym[CHK_MAX_IN][PRT_MAX_DIMS];
    int32_t nb_syms;
    int64_t sym_lo[CHK_MAX_SYMS], sym_hi[CHK_MAX_SYMS];
} chk_sig;

/* What the outputs check found the plugin to accept; the later checks
 * test these. */
typedef struct chk_plan {
    int32_t done;    /* discovery ran to its end */
    int32_t nb_sigs; /* 0: nothing found, `why` says what was tried */
    chk_sig sigs[CHK_MAX_SIGS];
    int32_t nb_outputs;
    uint32_t devices;
    char why[CHK_MSG];
} chk_plan;

/* The block a child shares with the parent. */
typedef struct chk_shared {
    chk_result result;
    char doing[512]; /* the entry called last: a crash names it */
    int32_t in_call; /* 1 while that entry runs */
    /* The first failure without a message (or with an unknown status), and
     * how many: the errors check reports those of every check. */
    char silent[CHK_MSG];
    int32_t nb_silent;
    /* Written by the abi check: the creator can be asked to create, and
     * the plugins it made have tables that can be called. */
    int32_t creator_ok, tables_ok;
    chk_plan plan; /* written by the outputs check */
    /* Counted by the child of each check (zeroed by the parent before it
     * starts): profiles configure accepted, and runs of enqueue that
     * returned PRT_OK. The summary reports them per check. */
    int64_t profiles, runs;
    chk_library_info lib; /* written by the library check */
} chk_shared;

/* ---- the state of one check in its child ------------------------------------ */

typedef struct chk_rng {
    uint64_t s;
} chk_rng;

typedef struct chk_ctx {
    const char *lib_path;
    void *handle;
    prt_plugin_entry_fn entry;
    const prt_plugin_library *lib;
    const prt_plugin_creator *creator; /* the one under check */
    int32_t creator_index;
    const prt_field_collection *fields; /* example values, or an empty set */
    const chk_plan *plan;
    /* The input spec for this creator (--inputs, or "@inputs" in the
     * fields file), which replaces discovery; NULL when none. */
    const chk_sig *spec;
    chk_shared *sh;
    uint64_t seed;
    int32_t iterations;
    int32_t verbose; /* print the plugin's log */
    /* Where the plugin runs (prt_device), and on CUDA the stream its runs
     * are queued on (the checker's own, never the default one; made on
     * first use). gated: runs queue work ahead of the plugin's on the
     * stream (the stream check). device_sync: after a run, wait for the
     * whole device, not only the stream (off in the threads check, whose
     * runs must overlap). */
    int32_t device;
    void *stream;
    int32_t gated;
    int32_t device_sync;
    chk_rng rng;
    char call[512]; /* the entry called last */
    /* set_error calls since chk_call_begin */
    int32_t nb_errors;
    prt_status error_status;
    char error[CHK_MSG];
    /* Set by chk_create when create returned PRT_OK but no plugin. */
    int32_t null_plugin;
} chk_ctx;

/* ---- check_sandbox.c ---------------------------------------------------- */

typedef void (*chk_fn)(chk_ctx *c);

/* Runs fn in a child process, with the library opened there when
 * `open_library`, and waits (at most timeout_s seconds). The child's
 * verdict is in c->sh->result; a child that crashed, hung or exited
 * without a verdict fails, naming the signal and what it was doing.
 * Returns 0 when the child ended normally, 1 when it did not. */
int chk_sandbox_run(chk_ctx *c, chk_fn fn, int open_library, int timeout_s);
/* The shared block (MAP_SHARED, anonymous); NULL on failure. */
chk_shared *chk_shared_create(void);
void chk_shared_destroy(chk_shared *sh);

/* ---- check_host.c: the library, host services, calls -------------------- */

/* dlopen + entry point with the checker's host services. 0 or -1 with the
 * reason in msg. */
int chk_library_open(chk_ctx *c, char *msg, size_t cap);
/* Makes chk_library_open call `entry` instead of opening c->lib_path (NULL:
 * open the file again); chk_library_is_given says which. For libraries
 * with no file, made in this process before the checks start: Python
 * plugins (check_python.c). */
void chk_library_give_entry(prt_plugin_entry_fn entry);
int chk_library_is_given(void);
const prt_host_services *chk_host_services(chk_ctx *c);
/* Sends the set_error calls this thread makes to c (NULL: to the context
 * the library was opened with). */
void chk_host_bind(chk_ctx *c);

/* Around every call of a plugin or creator entry: begin names it (for a
 * crash report) and forgets earlier set_error calls; end checks that a
 * failure came with a message and a known status, recording the first that
 * did not, and returns st. */
void chk_call_begin(chk_ctx *c, const char *fmt, ...) CLI_PRINTF(2, 3);
prt_status chk_call_end(chk_ctx *c, prt_status st);
/* The message of the last failed call ("(no message)" if none). */
const char *chk_call_error(const chk_ctx *c);

/* Verdicts. The first failure of a check is kept; pass and skip apply only
 * when nothing failed. */
void chk_fail(chk_ctx *c, const char *fmt, ...) CLI_PRINTF(2, 3);
void chk_fail_at(chk_ctx *c, const char *shape, int32_t tactic, const char *tensor,
                 int64_t element, const char *fmt, ...) CLI_PRINTF(6, 7);
void chk_pass(chk_ctx *c, const char *fmt, ...) CLI_PRINTF(2, 3);
void chk_skip(chk_ctx *c, const char *fmt, ...) CLI_PRINTF(2, 3);
int chk_failed(const chk_ctx *c);

/* Formats a reason into buf and returns -1, for `return chk_say(...)`. */
int chk_say(char *buf, size_t cap, const char *fmt, ...) CLI_PRINTF(3, 4);

/* A NUL-terminated string shorter than `max` bytes; else a reason. */
const char *chk_string_problem(const char *s, size_t max);

/* ---- random numbers --------------------------------------------------- */

uint64_t chk_rand(chk_rng *r);
/* Uniform in [lo, hi]. */
int64_t chk_rand_range(chk_rng *r, int64_t lo, int64_t hi);
/* A generator for one purpose of one check, from the seed. */
void chk_rng_init(chk_rng *r, uint64_t seed, uint64_t stream);

/* ---- plugins: making them, their tables, their fields (check_abi.c) ------ */

/* creator->create for `phase` with fields `fc`, as layer "check". NULL on
 * failure (the status in *out_st when not NULL); a success that gives no
 * plugin is a failure too. */
prt_plugin *chk_create(chk_ctx *c, int32_t phase, const prt_field_collection *fc,
                       prt_status *out_st);
/* Destroys a plugin through its table (NULL is fine). */
void chk_destroy(chk_ctx *c, prt_plugin *p);
/* 0 if p's tables are sane (sizes, versions, required entries; the build
 * table when need_build); else -1 with the reason. */
int chk_plugin_tables(const prt_plugin *p, int need_build, char *why, size_t cap);
/* 0 if p reports the creator's name, version and namespace. */
int chk_plugin_identity(chk_ctx *c, prt_plugin *p, char *why, size_t cap);
/* 0 if a serialized field collection is well formed; else -1 and why. */
int chk_fields_problem(const prt_field_collection *fc, char *why, size_t cap);
/* A deep copy (free with chk_fields_free); NULL on out of memory. */
prt_field_collection *chk_fields_copy(const prt_field_collection *fc);
void chk_fields_free(prt_field_collection *fc);
/* 1 if two collections hold the same fields in the same order. */
int chk_fields_equal(const prt_field_collection *a, const prt_field_collection *b);
/* Bytes of one element of a field type; 0 for an unknown type. */
size_t chk_field_type_size(int32_t type);

/* ---- the checks ----------------------------------------------------------- */

/* Each runs in a child of its own and gives one verdict (chk_pass, chk_fail,
 * chk_skip). The library check runs once per library, the others per
 * creator; outputs also finds what the plugin accepts (c->sh->plan), which
 * the later ones test (c->plan). */
void chk_check_library(chk_ctx *c); /* check_abi.c */
void chk_check_abi(chk_ctx *c);
void chk_check_outputs(chk_ctx *c); /* check_build.c */
void chk_check_shapes(chk_ctx *c);
void chk_check_size_tensors(chk_ctx *c);
void chk_check_formats(chk_ctx *c);
void chk_check_workspace(chk_ctx *c);
void chk_check_values(chk_ctx *c);
void chk_check_coverage(chk_ctx *c); /* check_runtime.c */
void chk_check_bounds(chk_ctx *c);
void chk_check_repeat(chk_ctx *c);
void chk_check_alias(chk_ctx *c);
void chk_check_clone(chk_ctx *c);
void chk_check_attach(chk_ctx *c);
void chk_check_serialize(chk_ctx *c);
void chk_check_contexts(chk_ctx *c);
void chk_check_threads(chk_ctx *c); /* check_threads.c */
void chk_check_empty(chk_ctx *c);   /* check_runtime.c */
void chk_check_tactics(chk_ctx *c);
void chk_check_stream(chk_ctx *c); /* check_device.c */
void chk_check_reference(chk_ctx *c);
void chk_check_errors(chk_ctx *c); /* check_runtime.c */

/* Whether c->device can be used here (check_device.c): pass with what it
 * is ("NVIDIA H200, compute capability 9.0"), or skip with the reason. In
 * a child of its own, as every check: the parent never starts a device
 * runtime (CUDA does not survive fork). */
void chk_probe_device(chk_ctx *c);

/* The subcommand (cmd_check.c). */
int cmd_check(int argc, char **argv);

/* ---- check_python.c: Python plugins --------------------------------------- */

/* 1 when the arguments of `plugrt check` hold --python. */
int chk_python_asked(int argc, char **argv);
/* `plugrt check --python MODULE[:NAME] ...`: runs `python3 -m plugrt.check
 * MODULE[:NAME] ...` in place of this process (the interpreter from
 * PLUGRT_PYTHON, else python3 on the PATH). Returns only on failure. */
int chk_python_exec(int argc, char **argv);
/* The checker of libplugrt_check.so: `plugrt check` with the library
 * given by its entry point (argv[1], where a file's path would be, only
 * names it), for the plugrt Python package (python -m plugrt.check).
 * Returns the command's exit status (0, 1 a failure, 2 usage, 3
 * untested); prints its report on stdout, errors on stderr. */
PRT_API int prt_check_main(int argc, char **argv, prt_plugin_entry_fn entry);

#endif /* PLUGRT_TOOLS_CHECK_H */
