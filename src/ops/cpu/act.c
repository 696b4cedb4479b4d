/* The CPU kernels of the fused activations (op_act.h) and the choice of
 * kernel build (cpu_kernels.h). */
#include "ops/cpu/cpu_kernels.h"

#include <stdatomic.h>

/* -1 undecided, else the answer of cpu_avx2(). */
static _Atomic int cpu_avx2_state = -1;
static _Atomic int cpu_baseline_forced;

int cpu_avx2(void)
{
    int s = atomic_load_explicit(&cpu_avx2_state, memory_order_relaxed);
    if (s < 0) {
#if CPU_HAVE_AVX2_BUILD && defined(__GNUC__)
        __builtin_cpu_init();
        s = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
        s = 0;
#endif
        atomic_store_explicit(&cpu_avx2_state, s, memory_order_relaxed);
    }
    return s && !atomic_load_explicit(&cpu_baseline_forced, memory_order_relaxed);
}

void cpu_force_baseline(int on)
{
    atomic_store(&cpu_baseline_forced, on != 0);
}

static _Atomic int cpu_avx512_state = -1;
static _Atomic int cpu_avx2_forced;

int cpu_avx512(void)
{
    int s = atomic_load_explicit(&cpu_avx512_state, memory_order_relaxed);
    if (s < 0) {
#if CPU_HAVE_AVX2_BUILD && defined(__GNUC__)
        __builtin_cpu_init();
        s = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
#else
        s = 0;
#endif
        atomic_store_explicit(&cpu_avx512_state, s, memory_order_relaxed);
    }
    return s && cpu_avx2() &&
           !atomic_load_explicit(&cpu_avx2_forced, memory_order_relaxed);
}

void cpu_force_avx2(int on)
{
    atomic_store(&cpu_avx2_forced, on != 0);
}

/* y[i] = act(y[i] + bias + (cb ? cb[i] : 0)) for n floats. */
static inline CPU_INLINE void act_body(const op_act *a, float bias, const float *cb,
                                       float *y, int64_t n)
{
    /* A bias of 0 is not added: it would only make -0 +0. */
    const cpu_v8 b = CPU_SPLAT(bias);
    const int add = bias != 0.0f;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        cpu_v8 v, c;
        CPU_LOAD(v, y + i);
        if (add)
            v += b;
        if (cb) {
            CPU_LOAD(c, cb + i);
            v += c;
        }
        cpu_act_v8(a, &v);
        CPU_STORE(y + i, v);
    }
    if (i < n) {
        float t[8] = {0}, tc[8] = {0};
        cpu_v8 v, c;
        memcpy(t, y + i, sizeof(float) * (size_t)(n - i));
        CPU_LOAD(v, t);
        if (add)
            v += b;
        if (cb) {
            memcpy(tc, cb + i, sizeof(float) * (size_t)(n - i));
            CPU_LOAD(c, tc);
            v += c;
        }
        cpu_act_v8(a, &v);
        CPU_STORE(t, v);
        memcpy(y + i, t, sizeof(float) * (size_t)(n - i));
    }
}

CPU_BUILDS(act, act_body,
           (const op_act *a, float bias, const float *cb, float *y, int64_t n),
           (a, bias, cb, y, n))

static void act_run(const op_act *a, float bias, const float *cb, float *y, int64_t n)
{
    CPU_PICK(act)(a, bias, cb, y, n);
}

void op_act_bias(const op_act *a, float bias, float *y, int64_t n)
{
    if (a->kind != OP_ACT_NONE || bias != 0.0f)
        act_run(a, bias, NULL, y, n);
}

void op_epilogue_apply(const op_epilogue *e, int64_t M, int64_t N, float *C, int64_t ldc)
{
    if (e->act.kind == OP_ACT_NONE && !e->row_bias && !e->col_bias)
        return;
    for (int64_t i = 0; i < M; i++)
        act_run(&e->act, e->row_bias ? e->row_bias[i] : 0.0f, e->col_bias, C + i * ldc,
                N);
}
