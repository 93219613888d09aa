/* The body of every kernel function, included once per dispatch level by memkernel.c with
 * MK_FN(name) naming that level's copy and the level's target options in effect (so the
 * __AVX2__ / __AVX512BW__ tests below see that level's instruction set). */

/* Candidates: every occupied slot holding query e's entity (in row rows[e]), grouped by query in
 * input order, slots ascending. The 16-bit entity hashes are compared first (8, 16 or 32 slots per
 * instruction), the full id and the type of each hash hit then. With `exponents`, cand_x gets the
 * exponent of each candidate's R = e^x, rules.exponential_exponent: x = min(last - now, 0) / S (the
 * min only with `clamp`). With `ids` (else `rows` is given), first resolves the NPC ids into
 * `rows`: returns -2 when an id is unknown or removed, -3 when a waking query's rows do not
 * strictly increase (an NPC may ask twice: the caller splits the batch into rounds). Returns the
 * count, or -1 when more than `room` (nothing is changed). */
int64_t MK_FN(mk_match)(const mk_pool *pool, const int64_t *ids, int64_t *rows, const int64_t *entities,
                        int64_t m, double now, int32_t exponents, int32_t clamp, int32_t wake,
                        int64_t *cand_query, int64_t *cand_flat, double *cand_x, int64_t room)
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
    const int64_t cap = pool->capacity;
    const int64_t *entity = pool->entity;
    const int8_t *type = pool->type;
    int64_t count = 0;
    for (int64_t e = 0; e < m; e++) {
        if (e + MK_AHEAD < m) /* rows may be anywhere in the pool (a round): load ahead */
            __builtin_prefetch(pool->hash + rows[e + MK_AHEAD] * cap);
        const int64_t base = rows[e] * cap;
        const int64_t wanted = entities[e];
        const uint16_t key = mk_hash(wanted);
        const uint16_t *hash = pool->hash + base;
        int64_t s = 0;
#define MK_HIT(slot)                                                                                \
    do {                                                                                            \
        const int64_t f_ = base + (slot);                                                           \
        if (entity[f_] == wanted && type[f_] >= 0) {                                                \
            if (count == room)                                                                      \
                return -1;                                                                          \
            MK_LOAD_AHEAD(pool, f_);                                                                \
            cand_query[count] = e;                                                                  \
            cand_flat[count] = f_;                                                                  \
            count++;                                                                                \
        }                                                                                           \
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
            const __m256i block = _mm256_loadu_si256((const __m256i *)(hash + s));
            uint32_t bits = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi16(block, splat));
            while (bits) { /* two mask bits per 16-bit lane */
                MK_HIT(s + (__builtin_ctz(bits) >> 1));
                bits &= bits - 1;
                bits &= bits - 1;
            }
        }
#else
        const __m128i splat = _mm_set1_epi16((short)key);
        for (; s + 8 <= cap; s += 8) {
            const __m128i block = _mm_loadu_si128((const __m128i *)(hash + s));
            uint32_t bits = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi16(block, splat));
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
    if (exponents) {
        const double *last = pool->last, *stability = pool->stability;
        for (int64_t c = 0; c < count; c++) {
            const int64_t f = cand_flat[c];
            double x = last[f] - now;
            if (clamp && x > 0.0)
                x = 0.0;
            cand_x[c] = x / stability[f];
        }
    }
    return count;
}

/* Pick, wake and consolidate (rules: the first maximum of R above the forget threshold; a wake
 * sets last = now, k + 1, clears the forget report; with E >= the consolidation threshold the
 * entity's other memories get S x f, f = rules.consolidation_factor, capped). `cand_r`: R of each
 * candidate. Two passes, so nothing is written when the ln(1 + k) table is too short: then returns
 * -(the table size needed). Otherwise the number of hits (at most `room`, which must be at least
 * min(m, count)), written into `out`: nine rows of `room` 8-byte cells, one cell per hit: rows
 * 0-4 int64 query, flat slot, entity, recall count, slot; rows 5-7 R, stability, salience; row 8
 * bytes: memory types, then (from byte `room`) pinned flags; then m cells: R of every query (0:
 * nothing remembered). `best`: m cells of scratch. */
int64_t MK_FN(mk_select)(mk_pool *pool, const int64_t *rows, const int64_t *entities, int64_t m,
                         int64_t count, const int64_t *cand_query, const int64_t *cand_flat,
                         const double *cand_r, double now, int32_t wake, int64_t *best, double *out,
                         int64_t room)
{
    int64_t *out_i = (int64_t *)out;
    double *out_d = out + 5 * room;
    uint8_t *out_b = (uint8_t *)(out + 8 * room);
    double *out_r = out + 9 * room;
    const double threshold = pool->threshold, min_salience = pool->min_salience;
    const int32_t consolidate = wake && pool->consolidate;
    int64_t need = 0;
    for (int64_t e = 0, c = 0; e < m; e++) {
        const int64_t first = c;
        int64_t pick = -1;
        double pick_r = 0.0;
        for (; c < count && cand_query[c] == e; c++) {
            if (cand_r[c] > threshold && (pick < 0 || cand_r[c] > pick_r)) {
                pick = c;
                pick_r = cand_r[c];
            }
        }
        best[e] = pick;
        if (pick >= 0 && consolidate && c - first > 1) {
            const int64_t f = cand_flat[pick];
            const int64_t k = pool->recalls[f] + 1;
            if (pool->salience[f] >= min_salience && k >= pool->ln_size && k + 1 > need)
                need = k + 1;
        }
    }
    if (need)
        return -need;
    const int64_t cap = pool->capacity;
    const double gain = pool->gain, max_stability = pool->max_stability;
    double *stability = pool->stability;
    int64_t hits = 0;
    for (int64_t e = 0, c = 0; e < m; e++) {
        const int64_t first = c;
        while (c < count && cand_query[c] == e)
            c++;
        const int64_t pick = best[e];
        if (pick < 0) {
            out_r[e] = 0.0;
            continue;
        }
        out_r[e] = cand_r[pick];
        const int64_t f = cand_flat[pick];
        const double salience = pool->salience[f];
        int64_t k = pool->recalls[f];
        if (wake) {
            k += 1;
            pool->recalls[f] = k;
            pool->last[f] = now;
            pool->reported[f] = 0;
            if (consolidate && c - first > 1 && salience >= min_salience) {
                const double factor = 1.0 + gain * pool->ln_table[k] * salience;
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
        out_i[room + hits] = f;
        out_i[2 * room + hits] = entities[e];
        out_i[3 * room + hits] = k;
        out_i[4 * room + hits] = f - rows[e] * cap;
        out_d[hits] = cand_r[pick];
        out_d[room + hits] = stability[f];
        out_d[2 * room + hits] = salience;
        out_b[hits] = (uint8_t)pool->type[f];
        out_b[room + hits] = pool->pinned[f];
        hits++;
    }
    return hits;
}

/* The exponents of R = e^x for n memories (curves.retrievability's exponential curve before its
 * exp): x = min(last - now, 0) / S (the min only with `clamp`), -inf where x <= floor. */
void MK_FN(mk_exponents)(const double *last, const double *stability, int64_t n, double now,
                         int32_t clamp, double floor, double *out)
{
    if (clamp) {
        for (int64_t i = 0; i < n; i++) {
            double x = last[i] - now;
            x = x > 0.0 ? 0.0 : x;
            x = x / stability[i];
            out[i] = x <= floor ? -__builtin_inf() : x;
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            const double x = (last[i] - now) / stability[i];
            out[i] = x <= floor ? -__builtin_inf() : x;
        }
    }
}
