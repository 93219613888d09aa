/* The body of every kernel function, included once per dispatch level by memkernel.c with
 * MK_FN(name) naming that level's copy and the level's target options in effect (so the
 * __AVX2__ / __AVX512BW__ tests below see that level's instruction set). */

/* The waking (or, without `wake`, reading) query of m (NPC, entity) pairs of distinct NPCs: what
 * Recall._query_round does with numpy, with its rules (npc_mind.memory.rules), for the exponential
 * curve. With `ids` (else `rows` is given), first resolves the NPC ids into `rows`: returns -2 when
 * an id is unknown or removed, -3 when a waking query's rows do not strictly increase (an NPC may
 * ask twice: the caller splits the batch into rounds), before anything is written.
 *
 * Per block of queries: the candidates, every occupied slot holding the query's entity (16-bit
 * hashes compared first, 8, 16 or 32 slots per instruction, then, in a second pass so that the
 * loads overlap, the full id and the type of the hash hits); their
 * R = e^x, x = min(last - now, 0) / S (rules.exponential_exponent, the min only with `clamp`), by
 * numpy's exp loop over the block; the pick, the first maximum of R above the forget threshold;
 * the wake (last = now, k + 1, the forget report cleared); with E >= the consolidation threshold,
 * the entity's other memories get S x f, f = 1 + gain ln(1 + k) E (rules.consolidation_factor,
 * ln by numpy's log loop), capped at max_stability.
 *
 * Returns the number of hits, written into `out`, ten rows of m 8-byte cells, one cell per hit:
 * rows 0-4 int64 query, flat slot, entity, recall count, slot; rows 5-7 R, stability, salience;
 * row 8 bytes: memory types, then (from byte m) pinned flags; row 9 R of every query (0: nothing
 * remembered). */
int64_t MK_FN(mk_query)(mk_pool *pool, const int64_t *ids, int64_t *rows, const int64_t *entities, int64_t m,
                        double now, int32_t clamp, int32_t wake, double *out)
{
    if (ids) {
        int64_t previous = -1, increasing = 1;
        for (int64_t i = 0; i < m; i++) {
            const int64_t id = ids[i];
            if (id < 0 || id >= pool->next_id || pool->row_of_id[id] < 0)
                return -2;
            const int64_t row = pool->row_of_id[id];
            increasing &= row > previous;
            previous = rows[i] = row;
        }
        if (wake && !increasing)
            return -3;
    }
    const int64_t cap = pool->capacity, block = pool->block;
    const int64_t *entity = pool->entity;
    const int8_t *type = pool->type;
    double *last = pool->last, *stability = pool->stability;
    int64_t *cand_query = pool->cand_query, *cand_flat = pool->cand_flat;
    double *cand_r = pool->cand_r;
    const double threshold = pool->threshold, min_salience = pool->min_salience, gain = pool->gain;
    const double max_stability = pool->max_stability;
    const int32_t consolidate = wake && pool->consolidate;
    int64_t *out_i = (int64_t *)out;
    double *out_d = out + 5 * m;
    uint8_t *out_b = (uint8_t *)(out + 8 * m);
    double *out_r = out + 9 * m;
    int64_t hits = 0;
    for (int64_t start = 0; start < m; start += block) {
        const int64_t end = start + block < m ? start + block : m;
        int64_t count = 0;
        for (int64_t e = start; e < end; e++) {
            if (e + MK_AHEAD < m) { /* rows may be anywhere in the pool (a round): load ahead */
                const uint16_t *ahead = pool->hash + rows[e + MK_AHEAD] * cap;
                __builtin_prefetch(ahead);
                __builtin_prefetch(ahead + 32);
            }
            const int64_t base = rows[e] * cap;
            const int64_t wanted = entities[e];
            const uint16_t key = mk_hash(wanted);
            const uint16_t *hash = pool->hash + base;
            int64_t s = 0;
#define MK_HIT(slot)                                                                                \
    do {                                                                                            \
        const int64_t f_ = base + (slot);                                                           \
        __builtin_prefetch(entity + f_);                                                            \
        __builtin_prefetch(type + f_);                                                              \
        cand_query[count] = e;                                                                      \
        cand_flat[count] = f_;                                                                      \
        count++;                                                                                    \
    } while (0)
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
                const __m256i chunk = _mm256_loadu_si256((const __m256i *)(hash + s));
                uint32_t bits = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi16(chunk, splat));
                while (bits) { /* two mask bits per 16-bit lane */
                    MK_HIT(s + (__builtin_ctz(bits) >> 1));
                    bits &= bits - 1;
                    bits &= bits - 1;
                }
            }
#else
            const __m128i splat = _mm_set1_epi16((short)key);
            for (; s + 8 <= cap; s += 8) {
                const __m128i chunk = _mm_loadu_si128((const __m128i *)(hash + s));
                uint32_t bits = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi16(chunk, splat));
                while (bits) {
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
#undef MK_HIT
        }
        /* the hash hits whose full id and type match are the candidates (their columns the
         * passes below read start loading now, all at once) */
        int64_t kept = 0;
        for (int64_t c = 0; c < count; c++) {
            const int64_t f = cand_flat[c], e = cand_query[c];
            if (entity[f] == entities[e] && type[f] >= 0) {
                MK_LOAD_AHEAD(pool, f);
                cand_query[kept] = e;
                cand_flat[kept] = f;
                kept++;
            }
        }
        count = kept;
        for (int64_t c = 0; c < count; c++) {
            const int64_t f = cand_flat[c];
            double x = last[f] - now;
            if (clamp && x > 0.0)
                x = 0.0;
            cand_r[c] = x / stability[f];
        }
        if (count) /* plain e^x, as the numpy round takes it */
            mk_run(pool->exp_loop, pool->exp_data, cand_r, count);
        for (int64_t e = start, c = 0; e < end; e++) {
            const int64_t first = c;
            int64_t pick = -1;
            double pick_r = 0.0;
            for (; c < count && cand_query[c] == e; c++) {
                if (cand_r[c] > threshold && (pick < 0 || cand_r[c] > pick_r)) {
                    pick = c;
                    pick_r = cand_r[c];
                }
            }
            out_r[e] = pick_r;
            if (pick < 0)
                continue;
            const int64_t f = cand_flat[pick];
            const double salience = pool->salience[f];
            int64_t k = pool->recalls[f];
            if (wake) {
                k += 1;
                pool->recalls[f] = k;
                last[f] = now;
                pool->reported[f] = 0;
                if (consolidate && c - first > 1 && salience >= min_salience) {
                    double ln = 1.0 + (double)k; /* rules.log1p_count: numpy's log of 1.0 + k */
                    mk_run(pool->log_loop, pool->log_data, &ln, 1);
                    const double factor = 1.0 + gain * ln * salience;
                    for (int64_t j = first; j < c; j++) {
                        const int64_t g = cand_flat[j];
                        if (g == f)
                            continue;
                        const double s = stability[g] * factor;
                        stability[g] = s < max_stability ? s : max_stability;
                    }
                }
            }
            out_i[hits] = e;
            out_i[m + hits] = f;
            out_i[2 * m + hits] = entities[e];
            out_i[3 * m + hits] = k;
            out_i[4 * m + hits] = f - rows[e] * cap;
            out_d[hits] = pick_r;
            out_d[m + hits] = stability[f];
            out_d[2 * m + hits] = salience;
            out_b[hits] = (uint8_t)type[f];
            out_b[m + hits] = pool->pinned[f];
            hits++;
        }
    }
    return hits;
}

/* R of n memories on the exponential curve (curves.retrievability): x = min(last - now, 0) / S,
 * -inf where x <= floor, then numpy's exp, a block at a time (the block stays in cache). */
void MK_FN(mk_retrievability)(const mk_pool *pool, const double *last, const double *stability, int64_t n,
                              double now, double floor, double *out)
{
    for (int64_t start = 0; start < n; start += MK_SWEEP_BLOCK) {
        const int64_t end = start + MK_SWEEP_BLOCK < n ? start + MK_SWEEP_BLOCK : n;
        for (int64_t i = start; i < end; i++) {
            double x = last[i] - now;
            x = x > 0.0 ? 0.0 : x;
            x = x / stability[i];
            out[i] = x <= floor ? -__builtin_inf() : x;
        }
        mk_run(pool->exp_loop, pool->exp_data, out + start, end - start);
    }
}
