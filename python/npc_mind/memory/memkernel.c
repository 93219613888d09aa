/* The memory pool's compiled query kernel (built by `scripts/provision memkernel` with cffi).
 *
 * It does what `MemoryPool._query_round` does with numpy, in two passes around one numpy call:
 *   mk_match   finds every working memory of each query's entity (hash, then the full id) and
 *              computes the exponent x = min(last - now, 0) / S of each candidate;
 *   (numpy)    R = exp(x): numpy computes it, so R has the same bits on both paths (numpy's SIMD
 *              exp and the C library's exp may differ in the last bit);
 *   mk_select  picks each query's strongest remembered memory (highest R, ties to the lowest
 *              slot), lets a stronger long-term memory win, wakes the winner (last = now, k + 1)
 *              and consolidates the same entity's other memories when E >= the threshold.
 * ln(1 + k) comes from a table that numpy computed, for the same reason as exp. Only IEEE
 * +, -, x, / and comparisons run here, built with -ffp-contract=off, so every value is
 * bit-for-bit what the numpy path computes. Queries of one call must name distinct NPCs (the
 * caller splits a batch into rounds otherwise).
 */
#include <stdint.h>
#include <string.h>

#include "memkernel.h"

static inline uint16_t mk_hash(int64_t entity)
{
    return (uint16_t)(((uint64_t)entity * UINT64_C(0x9E3779B97F4A7C15)) >> 48);
}

#if defined(__AVX512BW__) || defined(__AVX2__)
#include <immintrin.h>
#endif

/* How many candidates ahead the passes over candidates start loading their fields. */
#ifndef MK_AHEAD
#define MK_AHEAD 16
#endif

/* Record slot `s` of query `e` as a hash hit, and start loading its recall count (a column the
 * pool's other batch work rarely reads, so likely out of cache when mk_select needs it). */
#define MK_HIT(s)                                                                                   \
    do {                                                                                            \
        if (count == room)                                                                          \
            return -1;                                                                              \
        __builtin_prefetch(pool->recalls + base + (s));                                             \
        cand_query[count] = e;                                                                      \
        cand_flat[count] = base + (s);                                                              \
        count++;                                                                                    \
    } while (0)

/* Candidates: every occupied slot holding the query's entity, grouped by query in input order,
 * slots ascending, into sc (with the exponent x when the curve is exponential). With `ids` (else
 * sc->rows is given), first resolves and checks the NPC ids into sc->rows (-2: an id is unknown
 * or removed; cells[0] = 1 when the rows strictly increase, so no NPC repeats). Returns the
 * candidates' count, or -1 when more than sc->room (nothing is changed).
 * Two passes: the first compares the 16-bit hashes (a sequential read, 32 or 16 slots per
 * instruction where the CPU has AVX-512 or AVX2), the second checks the full ids of the few
 * hash hits and computes their exponents. */
int64_t mk_match(const mk_pool *pool, mk_scratch *sc, const int64_t *ids, const int64_t *entities, int64_t m,
                 double now, int32_t clamp)
{
    int64_t *rows = sc->rows, *cand_query = sc->cand_query, *cand_flat = sc->cand_flat;
    double *cand_x = sc->cand_x;
    const int64_t room = sc->room;
    if (ids) {
        int64_t increasing = 1, previous = -1;
        for (int64_t i = 0; i < m; i++) {
            const int64_t id = ids[i];
            if (id < 0 || id >= pool->next_id || pool->row_of_id[id] < 0)
                return -2;
            rows[i] = pool->row_of_id[id];
            if (rows[i] <= previous)
                increasing = 0;
            previous = rows[i];
        }
        sc->cells[0] = increasing;
    }
    const int64_t cap = pool->capacity;
    int64_t count = 0;
    for (int64_t e = 0; e < m; e++) {
        const int64_t base = rows[e] * cap;
        const uint16_t key = mk_hash(entities[e]);
        const uint16_t *hash = pool->hash + base;
        int64_t s = 0;
#if defined(__AVX512BW__)
        const __m512i splat = _mm512_set1_epi16((short)key);
        for (; s + 32 <= cap; s += 32) {
            uint32_t bits = _mm512_cmpeq_epi16_mask(_mm512_loadu_si512((const void *)(hash + s)), splat);
            while (bits) {
                MK_HIT(s + __builtin_ctz(bits));
                bits &= bits - 1;
            }
        }
#elif defined(__AVX2__)
        const __m256i splat = _mm256_set1_epi16((short)key);
        for (; s + 16 <= cap; s += 16) {
            __m256i block = _mm256_loadu_si256((const __m256i *)(hash + s));
            uint32_t bits = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi16(block, splat));
            while (bits) { /* two mask bits per 16-bit lane */
                MK_HIT(s + (__builtin_ctz(bits) >> 1));
                bits &= bits - 1;
                bits &= bits - 1;
            }
        }
#endif
        for (; s < cap; s++) {
            if (hash[s] == key)
                MK_HIT(s);
        }
    }
    int64_t kept = 0;
    for (int64_t c = 0; c < count; c++) {
        const int64_t e = cand_query[c], f = cand_flat[c];
        if (c + MK_AHEAD < count) { /* the hits are scattered over the columns: load ahead */
            const int64_t g = cand_flat[c + MK_AHEAD];
            __builtin_prefetch(pool->entity + g);
            __builtin_prefetch(pool->type + g);
            __builtin_prefetch(pool->last + g);
            __builtin_prefetch(pool->stability + g);
        }
        if (pool->entity[f] != entities[e] || pool->type[f] < 0)
            continue;
        cand_query[kept] = e;
        cand_flat[kept] = f;
        if (pool->exponential) {
            double x = pool->last[f] - now;
            if (clamp && x > 0.0)
                x = 0.0;
            cand_x[kept] = x / pool->stability[f];
        }
        kept++;
    }
    return kept;
}

/* Select, wake and consolidate (see the file comment). `cand_r` is R of each candidate (NULL:
 * sc->cand_x holds it); `longterm_r` (or NULL) the R of each query's best long-term memory.
 * Writes into `out`, ten rows of m cells, per hit h in query order: rows 0-4 (int64) query, flat
 * slot, entity, recall count, slot; rows 5-7 R, stability, salience; row 8 R of every query (0
 * when nothing is remembered); row 9 bytes: memory types, then pinned flags. Also lists the
 * queries a long-term memory won (count in cells[1]), the hits that woke with E >= the
 * consolidation threshold, for links (cells[2]), and those whose k is past the ln table, whose
 * same-entity consolidation is left to the caller (cells[3]). Returns the number of working hits. */
int64_t mk_select(mk_pool *pool, mk_scratch *sc, const int64_t *entities, int64_t m, int64_t count,
                  const double *cand_r, const double *longterm_r, double now, int32_t wake, double *out)
{
    const int64_t *rows = sc->rows, *cand_query = sc->cand_query, *cand_flat = sc->cand_flat;
    int64_t *longterm_won = sc->longterm_won, *strong = sc->strong, *deferred = sc->deferred;
    const double threshold = pool->threshold, min_salience = pool->min_salience, gain = pool->gain;
    const double max_stability = pool->max_stability;
    const double *ln_table = pool->ln_table;
    const int64_t ln_size = pool->ln_size;
    const int32_t consolidate = pool->consolidate;
    if (!cand_r)
        cand_r = sc->cand_x;
    int64_t *out_i = (int64_t *)out;
    double *out_d = out + 5 * m;
    uint8_t *out_b = (uint8_t *)(out + 9 * m);
    const int64_t cap = pool->capacity;
    int64_t c = 0, hits = 0, won = 0, strong_n = 0, deferred_n = 0;
    for (int64_t e = 0; e < m; e++) {
        const int64_t first = c;
        if (c + MK_AHEAD < count) { /* the fields a winner reads and writes, a few queries ahead */
            const int64_t g = cand_flat[c + MK_AHEAD];
            __builtin_prefetch(pool->salience + g);
            __builtin_prefetch(pool->recalls + g, 1);
            __builtin_prefetch(pool->last + g, 1);
            __builtin_prefetch(pool->reported + g, 1);
            __builtin_prefetch(pool->pinned + g);
            __builtin_prefetch(pool->type + g);
            __builtin_prefetch(pool->stability + g);
        }
        while (c < count && cand_query[c] == e)
            c++;
        int64_t best = -1;
        double best_r = 0.0;
        for (int64_t j = first; j < c; j++) {
            if (cand_r[j] > threshold && (best < 0 || cand_r[j] > best_r)) {
                best = j;
                best_r = cand_r[j];
            }
        }
        if (longterm_r && longterm_r[e] > threshold && longterm_r[e] > best_r) {
            longterm_won[won++] = e;
            out_d[3 * m + e] = longterm_r[e];
            continue;
        }
        if (best < 0) {
            out_d[3 * m + e] = 0.0;
            continue;
        }
        out_d[3 * m + e] = best_r;
        const int64_t f = cand_flat[best];
        const double salience = pool->salience[f];
        int64_t k = pool->recalls[f];
        if (wake) {
            k += 1;
            pool->recalls[f] = k;
            pool->last[f] = now;
            pool->reported[f] = 0;
            if (consolidate && salience >= min_salience) {
                if (c - first > 1 && k >= ln_size) {
                    deferred[deferred_n++] = hits; /* past the table: the caller does it */
                } else if (c - first > 1) {
                    const double factor = 1.0 + gain * ln_table[k] * salience;
                    for (int64_t j = first; j < c; j++) {
                        const int64_t g = cand_flat[j];
                        if (g == f)
                            continue;
                        const double s = pool->stability[g] * factor;
                        pool->stability[g] = s < max_stability ? s : max_stability;
                    }
                }
                strong[strong_n++] = hits;
            }
        }
        out_i[hits] = e;
        out_i[m + hits] = f;
        out_i[2 * m + hits] = entities[e];
        out_i[3 * m + hits] = k;
        out_i[4 * m + hits] = f - rows[e] * cap;
        out_d[hits] = best_r;
        out_d[m + hits] = pool->stability[f];
        out_d[2 * m + hits] = salience;
        out_b[hits] = (uint8_t)pool->type[f];
        out_b[m + hits] = pool->pinned[f];
        hits++;
    }
    sc->cells[1] = won;
    sc->cells[2] = strong_n;
    sc->cells[3] = deferred_n;
    return hits;
}
