/* The memory pool's compiled kernel (built by `scripts/provision memkernel` with cffi; loaded by
 * npc_mind.memory.kernel). For every x86-64 CPU: each function is compiled three times from
 * memkernel_body.h, for the baseline ISA (SSE2, what every x86-64 CPU runs), for AVX2 and for
 * AVX-512 (F, BW, VL), and the loader picks the widest level the CPU reports (mk_cpu_level), or
 * the one NPC_MIND_KERNEL forces.
 *
 * It also scores utility batches (utility_body.h, included beside memkernel_body.h at each level).
 *
 * What it computes is what the numpy path computes with the rules of npc_mind.memory.rules, bit
 * for bit (tests/test_memory_kernel.py proves it at every level): only IEEE +, -, x, / and
 * comparisons run here, built with -ffp-contract=off and without fast-math, so no level fuses or
 * reorders an operation; exp and ln, whose last bit may differ between libraries, are numpy's own
 * inner loops (np.exp's and np.log's float64 loops, which the loader takes from the ufuncs and
 * checks), so they have the numpy path's bits on whatever CPU numpy itself dispatches for.
 */
#include <stdint.h>
#include <immintrin.h>

#include "memkernel.h"

/* How many queries (or candidates) ahead the passes start loading the columns they will read. */
#define MK_AHEAD 16

/* Start loading the columns the exponent and the select pass read of candidate slot f: the hits
 * are scattered over the pool, and loads issued together overlap. */
#define MK_LOAD_AHEAD(pool, f)                                                                      \
    do {                                                                                            \
        __builtin_prefetch((pool)->last + (f), 1);                                                  \
        __builtin_prefetch((pool)->stability + (f), 1);                                             \
        __builtin_prefetch((pool)->salience + (f));                                                 \
        __builtin_prefetch((pool)->recalls + (f), 1);                                               \
        __builtin_prefetch((pool)->reported + (f), 1);                                              \
        __builtin_prefetch((pool)->pinned + (f));                                                   \
    } while (0)

/* Start loading what mk_record reads of the row at flat slot `base`: its hashes, types, pinned
 * flags and, for its eviction keys, last accesses, stabilities and saliences. */
#define MK_ROW_AHEAD(pool, base, cap)                                                               \
    do {                                                                                            \
        for (int64_t b_ = 0; b_ < (cap); b_ += 32)                                                  \
            __builtin_prefetch((pool)->hash + (base) + b_);                                         \
        for (int64_t b_ = 0; b_ < (cap); b_ += 64) {                                                \
            __builtin_prefetch((pool)->type + (base) + b_);                                         \
            __builtin_prefetch((pool)->pinned + (base) + b_);                                       \
        }                                                                                           \
        for (int64_t b_ = 0; b_ < (cap); b_ += 8) {                                                 \
            __builtin_prefetch((pool)->last + (base) + b_);                                         \
            __builtin_prefetch((pool)->stability + (base) + b_);                                    \
            __builtin_prefetch((pool)->salience + (base) + b_);                                     \
        }                                                                                           \
    } while (0)

/* columns.entity_hash: a 16-bit multiplicative hash of the id. */
static inline uint16_t mk_hash(int64_t entity)
{
    return (uint16_t)(((uint64_t)entity * UINT64_C(0x9E3779B97F4A7C15)) >> 48);
}

/* How many doubles the sweep computes before taking their exp (8 KB: within the first cache). */
#define MK_SWEEP_BLOCK 1024

/* numpy's loop over n contiguous doubles, in place. */
static inline void mk_run(mk_loop loop, void *data, double *values, int64_t n)
{
    char *args[2] = {(char *)values, (char *)values};
    const intptr_t dimensions[1] = {(intptr_t)n};
    const intptr_t steps[2] = {sizeof(double), sizeof(double)};
    loop(args, dimensions, steps, data);
}

/* The head of numpy's PyUFuncObject (numpy/ufuncobject.h), after CPython's PyObject_HEAD. */
typedef struct {
    intptr_t ob_refcnt;
    void *ob_type;
    int nin, nout, nargs;
    int identity;
    mk_loop *functions;
    void *const *data;
    int ntypes;
    int reserved1;
    const char *name;
    const char *types;
} mk_ufunc_head;

#define MK_NPY_DOUBLE 12 /* numpy's type number of float64 (NPY_DOUBLE) */

/* The first loop of a ufunc with `nin` inputs and one output whose types are all float64. */
static int32_t mk_double_loop_of(const void *ufunc, int nin, mk_loop *loop, void **data)
{
    const mk_ufunc_head *u = (const mk_ufunc_head *)ufunc;
    if (u->nin != nin || u->nout != 1 || u->nargs != nin + 1 || u->ntypes <= 0 || !u->functions || !u->types)
        return -1;
    for (int i = 0; i < u->ntypes; i++) {
        int all_double = 1;
        for (int a = 0; a < nin + 1; a++)
            all_double &= u->types[(nin + 1) * i + a] == MK_NPY_DOUBLE;
        if (all_double && u->functions[i]) {
            *loop = u->functions[i];
            *data = u->data ? u->data[i] : 0;
            return 0;
        }
    }
    return -1;
}

static int32_t mk_double_loop(const void *ufunc, mk_loop *loop, void **data)
{
    return mk_double_loop_of(ufunc, 1, loop, data);
}

int32_t mk_take_loops(mk_pool *pool, const void *exp_ufunc, const void *log_ufunc)
{
    if (mk_double_loop(exp_ufunc, &pool->exp_loop, &pool->exp_data) ||
        mk_double_loop(log_ufunc, &pool->log_loop, &pool->log_data))
        return -1;
    return 0;
}

void mk_apply(mk_pool *pool, int32_t which, double *values, int64_t n)
{
    if (which == 0)
        mk_run(pool->exp_loop, pool->exp_data, values, n);
    else
        mk_run(pool->log_loop, pool->log_data, values, n);
}

void mk_fill_ln(mk_pool *pool, double *table, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        table[k] = 1.0 + (double)k;
    mk_run(pool->log_loop, pool->log_data, table, n);
}

int32_t mk_take_utility_loops(mk_utility *plan, const void *exp_ufunc, const void *log_ufunc,
                              const void *sin_ufunc, const void *power_ufunc)
{
    if (mk_double_loop_of(exp_ufunc, 1, &plan->exp_loop, &plan->exp_data) ||
        mk_double_loop_of(log_ufunc, 1, &plan->log_loop, &plan->log_data) ||
        mk_double_loop_of(sin_ufunc, 1, &plan->sin_loop, &plan->sin_data) ||
        mk_double_loop_of(power_ufunc, 2, &plan->power_loop, &plan->power_data))
        return -1;
    return 0;
}

/* numpy's binary loop over n contiguous bases and exponents (exponent_step 8), or one exponent
 * (exponent_step 0, as numpy calls it for a scalar or an (M, 1) column: its loop may then take a
 * faster path, such as a square root for 0.5, with other bits), into out. */
static inline void mk_run_power(const mk_utility *plan, const double *base, const double *exponent,
                                intptr_t exponent_step, double *out, int64_t n)
{
    char *args[3] = {(char *)base, (char *)exponent, (char *)out};
    const intptr_t dimensions[1] = {(intptr_t)n};
    const intptr_t steps[3] = {sizeof(double), exponent_step, sizeof(double)};
    plan->power_loop(args, dimensions, steps, plan->power_data);
}

void mk_utility_apply(const mk_utility *plan, int32_t which, double *values, int64_t n, double exponent)
{
    if (which == 0)
        mk_run(plan->exp_loop, plan->exp_data, values, n);
    else if (which == 1)
        mk_run(plan->log_loop, plan->log_data, values, n);
    else if (which == 2)
        mk_run(plan->sin_loop, plan->sin_data, values, n);
    else
        mk_run_power(plan, values, &exponent, 0, values, n);
}

/* NPCs per block of utility scoring: the block's rows of curve outputs stay in the first caches. */
#define MK_U_BLOCK 256

int64_t mk_utility_block(void)
{
    return MK_U_BLOCK;
}

int32_t mk_cpu_level(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl"))
        return 2;
    if (__builtin_cpu_supports("avx2"))
        return 1;
    return 0;
}

#define MK_FN(name) name##_baseline
#include "memkernel_body.h"
#include "utility_body.h"
#undef MK_FN

#pragma GCC push_options
#pragma GCC target("avx2,bmi,bmi2,popcnt,lzcnt")
#define MK_FN(name) name##_avx2
#include "memkernel_body.h"
#include "utility_body.h"
#undef MK_FN
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx2,bmi,bmi2,popcnt,lzcnt")
#define MK_FN(name) name##_avx512
#include "memkernel_body.h"
#include "utility_body.h"
#undef MK_FN
#pragma GCC pop_options
