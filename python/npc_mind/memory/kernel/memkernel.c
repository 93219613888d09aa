/* The memory pool's compiled kernel (built by `scripts/provision memkernel` with cffi; loaded by
 * npc_mind.memory.kernel). For every x86-64 CPU: each function is compiled three times from
 * memkernel_body.h, for the baseline ISA (SSE2, what every x86-64 CPU runs), for AVX2 and for
 * AVX-512 (F, BW, VL), and the loader picks the widest level the CPU reports (mk_cpu_level), or
 * the one NPC_MIND_KERNEL forces.
 *
 * What it computes is what the numpy path computes with the rules of npc_mind.memory.rules, bit
 * for bit (tests/test_memory_kernel.py proves it at every level): only IEEE +, -, x, / and
 * comparisons run here, built with -ffp-contract=off and without fast-math, so no level fuses or
 * reorders an operation; exp and ln, whose last bit may differ between libraries, come from numpy
 * (the caller takes e^x of the exponents given here; ln(1 + k) is a table numpy computed).
 */
#include <stdint.h>
#include <immintrin.h>

#include "memkernel.h"

/* How many queries (or candidates) ahead the passes start loading the columns they will read. */
#define MK_AHEAD 8

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

/* columns.entity_hash: a 16-bit multiplicative hash of the id. */
static inline uint16_t mk_hash(int64_t entity)
{
    return (uint16_t)(((uint64_t)entity * UINT64_C(0x9E3779B97F4A7C15)) >> 48);
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
#undef MK_FN

#pragma GCC push_options
#pragma GCC target("avx2,bmi,bmi2,popcnt,lzcnt")
#define MK_FN(name) name##_avx2
#include "memkernel_body.h"
#undef MK_FN
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx2,bmi,bmi2,popcnt,lzcnt")
#define MK_FN(name) name##_avx512
#include "memkernel_body.h"
#undef MK_FN
#pragma GCC pop_options
