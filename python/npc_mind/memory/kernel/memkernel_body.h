/* The body of every kernel function, included once per dispatch level by memkernel.c with
 * MK_FN(name) naming that level's copy and the level's target options in effect (so the
 * __AVX2__ / __AVX512BW__ tests below see that level's instruction set). */

/* MK_SCAN_HASH(hash, cap, key, HIT): HIT(slot) for each slot of one row whose 16-bit entity hash is
 * `key`, ascending (the query's candidates and the record's look-up both scan with it), at this
 * level's vector width. Redefined at each level: the width is chosen when this file is included. */
#undef MK_SCAN_HASH
#if defined(__AVX512BW__)
#define MK_SCAN_HASH(hash, cap, key, HIT)                                                           \
    do {                                                                                            \
        int64_t s_ = 0;                                                                             \
        const __m512i splat_ = _mm512_set1_epi16((short)(key));                                     \
        for (; s_ + 32 <= (cap); s_ += 32) {                                                        \
            uint32_t bits_ = _mm512_cmpeq_epi16_mask(_mm512_loadu_si512((const void *)((hash) + s_)), splat_); \
            while (bits_) {                                                                         \
                HIT(s_ + __builtin_ctz(bits_));                                                     \
                bits_ &= bits_ - 1;                                                                 \
            }                                                                                       \
        }                                                                                           \
        for (; s_ < (cap); s_++)                                                                    \
            if ((hash)[s_] == (key))                                                                \
                HIT(s_);                                                                            \
    } while (0)
#elif defined(__AVX2__)
#define MK_SCAN_HASH(hash, cap, key, HIT)                                                           \
    do {                                                                                            \
        int64_t s_ = 0;                                                                             \
        const __m256i splat_ = _mm256_set1_epi16((short)(key));                                     \
        for (; s_ + 16 <= (cap); s_ += 16) {                                                        \
            const __m256i chunk_ = _mm256_loadu_si256((const __m256i *)((hash) + s_));              \
            uint32_t bits_ = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi16(chunk_, splat_));    \
            while (bits_) { /* two mask bits per 16-bit lane */                                     \
                HIT(s_ + (__builtin_ctz(bits_) >> 1));                                              \
                bits_ &= bits_ - 1;                                                                 \
                bits_ &= bits_ - 1;                                                                 \
            }                                                                                       \
        }                                                                                           \
        for (; s_ < (cap); s_++)                                                                    \
            if ((hash)[s_] == (key))                                                                \
                HIT(s_);                                                                            \
    } while (0)
#else
#define MK_SCAN_HASH(hash, cap, key, HIT)                                                           \
    do {                                                                                            \
        int64_t s_ = 0;                                                                             \
        const __m128i splat_ = _mm_set1_epi16((short)(key));                                        \
        for (; s_ + 8 <= (cap); s_ += 8) {                                                          \
            const __m128i chunk_ = _mm_loadu_si128((const __m128i *)((hash) + s_));                 \
            uint32_t bits_ = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi16(chunk_, splat_));          \
            while (bits_) { /* two mask bits per 16-bit lane */                                     \
                HIT(s_ + (__builtin_ctz(bits_) >> 1));                                              \
                bits_ &= bits_ - 1;                                                                 \
                bits_ &= bits_ - 1;                                                                 \
            }                                                                                       \
        }                                                                                           \
        for (; s_ < (cap); s_++)                                                                    \
            if ((hash)[s_] == (key))                                                                \
                HIT(s_);                                                                            \
    } while (0)
#endif

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
#define MK_HIT(slot)                                                                                \
    do {                                                                                            \
        const int64_t f_ = base + (slot);                                                           \
        __builtin_prefetch(entity + f_);                                                            \
        __builtin_prefetch(type + f_);                                                              \
        cand_query[count] = e;                                                                      \
        cand_flat[count] = f_;                                                                      \
        count++;                                                                                    \
    } while (0)
            MK_SCAN_HASH(hash, cap, key, MK_HIT);
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

/* MemoryPool.pop_forgotten's scan of the first `rows` rows: each working memory (type >= 0) not
 * reported since it last woke whose forget time, S x factor + last access, is at or before `now`
 * is marked reported, its flat slot written to cells and that time to due, in slot order. A row's
 * scan ends at its last occupied slot (used_slots counts them), and never past the row. Returns
 * how many. */
int64_t MK_FN(mk_forgotten)(mk_pool *pool, int64_t rows, double factor, double now, int64_t *cells, double *due)
{
    const int8_t *type = pool->type;
    const double *last = pool->last, *stability = pool->stability;
    uint8_t *reported = pool->reported;
    const int64_t cap = pool->capacity;
    int64_t count = 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t left = pool->used_slots[r];
        for (int64_t f = r * cap, end = f + cap; left > 0 && f < end; f++) {
            if (type[f] < 0)
                continue;
            left--;
            if (reported[f])
                continue;
            double at = stability[f] * factor;
            at = at + last[f];
            if (at <= now) {
                reported[f] = 1;
                cells[count] = f;
                due[count] = at;
                count++;
            }
        }
    }
    return count;
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

/* Per query q of m (pool row rows[q], entity entities[q] or 0 for anyone, type mask masks[q]: bit t
 * set, type t counts, 0 every type; R floor floors[q]): the strongest working memory of the row
 * that passes them, with R above the floor and above the forget threshold, the first of the row's
 * slots among equals (MemoryPool.strongest, the numpy path). R as mk_retrievability's: x = min(last -
 * now, 0) / S, -inf where x <= the exponent floor, numpy's exp over a block of queries' candidates.
 * Its entity and R into out_entity and out_r; 0 and 0 where none passes. Only looks. */
void MK_FN(mk_strongest)(mk_pool *pool, const int64_t *rows, const int64_t *entities, const int64_t *masks,
                         const double *floors, int64_t m, double now, int64_t *out_entity, double *out_r)
{
    const int64_t cap = pool->capacity, block = pool->block;
    const int64_t *entity = pool->entity, *used = pool->used_slots;
    const int8_t *type = pool->type;
    const double *last = pool->last, *stability = pool->stability;
    const double exponent_floor = pool->floor, threshold = pool->threshold;
    int64_t *cand_query = pool->cand_query, *cand_flat = pool->cand_flat;
    double *cand_r = pool->cand_r;
    for (int64_t start = 0; start < m; start += block) {
        const int64_t end = start + block < m ? start + block : m;
        int64_t count = 0;
        for (int64_t q = start; q < end; q++) {
            const int64_t row = rows[q], mask = masks[q], wanted = entities[q];
            int64_t left = used[row];
            for (int64_t f = row * cap, stop = f + cap; left > 0 && f < stop; f++) {
                const int8_t t = type[f];
                if (t < 0)
                    continue;
                left--;
                if ((mask != 0 && !((mask >> t) & 1)) || (wanted != 0 && entity[f] != wanted))
                    continue;
                double x = last[f] - now;
                x = x > 0.0 ? 0.0 : x;
                x = x / stability[f];
                cand_query[count] = q;
                cand_flat[count] = f;
                cand_r[count++] = x <= exponent_floor ? -__builtin_inf() : x;
            }
            out_entity[q] = 0;
            out_r[q] = -1.0; /* below every R: the first that passes is kept */
        }
        mk_run(pool->exp_loop, pool->exp_data, cand_r, count);
        for (int64_t c = 0; c < count; c++) {
            const int64_t q = cand_query[c];
            const double r = cand_r[c];
            if (r > out_r[q] && r > floors[q] && r > threshold) {
                out_r[q] = r;
                out_entity[q] = entity[cand_flat[c]];
            }
        }
        for (int64_t q = start; q < end; q++)
            if (out_r[q] < 0.0)
                out_r[q] = 0.0;
    }
}

/* The slots of one row whose 16-bit entity hash is `key`, ascending, into out (at most cap). */
static inline int64_t MK_FN(mk_hash_hits)(const uint16_t *hash, int64_t cap, uint16_t key, int64_t *out)
{
    int64_t count = 0;
#define MK_OUT(slot) (out[count++] = (slot))
    MK_SCAN_HASH(hash, cap, key, MK_OUT);
#undef MK_OUT
    return count;
}

/* The eviction keys of the row at flat slot `base` at `now` into keys (eviction.keys): pinned
 * +inf, free -2, forgotten (R < threshold) -1, else w_r R + w_e E, with R = e^max(x, floor),
 * x = min(last - now, 0) / S (the min only with `clamp`), e^ by numpy's exp loop. */
static void MK_FN(mk_row_keys)(mk_pool *pool, int64_t base, double now, int32_t clamp, double *keys)
{
    const int64_t cap = pool->capacity;
    const double floor = pool->floor, threshold = pool->threshold;
    const double weight_r = pool->weight_r, weight_e = pool->weight_e;
    const double *last = pool->last + base, *stability = pool->stability + base;
    const double *salience = pool->salience + base;
    const int8_t *type = pool->type + base;
    const uint8_t *pinned = pool->pinned + base;
    for (int64_t s = 0; s < cap; s++) {
        double x = last[s] - now;
        if (clamp && x > 0.0)
            x = 0.0;
        x = x / stability[s];
        keys[s] = (x >= floor || x != x) ? x : floor; /* np.maximum(x, floor) */
    }
    mk_run(pool->exp_loop, pool->exp_data, keys, cap);
    for (int64_t s = 0; s < cap; s++) {
        const double r = keys[s];
        double key = r * weight_r + salience[s] * weight_e;
        if (r < threshold)
            key = -1.0;
        if (type[s] < 0)
            key = -2.0;
        if (pinned[s])
            key = __builtin_inf();
        keys[s] = key;
    }
}

/* The first lowest of n keys (numpy's argmin: the first NaN, else the first minimum; -0.0 and
 * 0.0 are equal): the lowest value by vector minima, then the first key equal to it. */
static inline int64_t MK_FN(mk_argmin)(const double *keys, int64_t n)
{
    int64_t s = 0;
    double low = keys[0];
#if defined(__AVX512F__)
    if (n >= 8) {
        __m512d lows = _mm512_loadu_pd(keys);
        __mmask8 nan = _mm512_cmp_pd_mask(lows, lows, _CMP_UNORD_Q);
        for (s = 8; s + 8 <= n; s += 8) {
            const __m512d v = _mm512_loadu_pd(keys + s);
            nan |= _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q);
            lows = _mm512_min_pd(lows, v);
        }
        if (nan)
            s = 0; /* the scalar loop below finds the first NaN */
        else
            low = _mm512_reduce_min_pd(lows);
    }
#elif defined(__AVX2__)
    if (n >= 4) {
        __m256d lows = _mm256_loadu_pd(keys);
        __m256d nan = _mm256_cmp_pd(lows, lows, _CMP_UNORD_Q);
        for (s = 4; s + 4 <= n; s += 4) {
            const __m256d v = _mm256_loadu_pd(keys + s);
            nan = _mm256_or_pd(nan, _mm256_cmp_pd(v, v, _CMP_UNORD_Q));
            lows = _mm256_min_pd(lows, v);
        }
        if (_mm256_movemask_pd(nan))
            s = 0;
        else {
            double lanes[4];
            _mm256_storeu_pd(lanes, lows);
            for (int j = 0; j < 4; j++)
                low = lanes[j] < low ? lanes[j] : low;
        }
    }
#else
    if (n >= 2) {
        __m128d lows = _mm_loadu_pd(keys);
        __m128d nan = _mm_cmpunord_pd(lows, lows);
        for (s = 2; s + 2 <= n; s += 2) {
            const __m128d v = _mm_loadu_pd(keys + s);
            nan = _mm_or_pd(nan, _mm_cmpunord_pd(v, v));
            lows = _mm_min_pd(lows, v);
        }
        if (_mm_movemask_pd(nan))
            s = 0;
        else {
            double lanes[2];
            _mm_storeu_pd(lanes, lows);
            low = lanes[0] < lanes[1] ? lanes[0] : lanes[1];
            low = keys[0] < low ? keys[0] : low;
        }
    }
#endif
    if (s) { /* the vectors held no NaN: the rest, then the first key equal to the lowest */
        for (int64_t t = s; t < n; t++) {
            if (keys[t] != keys[t])
                return t;
            low = keys[t] < low ? keys[t] : low;
        }
        for (int64_t t = 0;; t++) {
            if (keys[t] == low)
                return t;
        }
    }
    int64_t best = 0;
    if (low != low)
        return 0;
    for (s = 1; s < n; s++) {
        const double key = keys[s];
        if (key != key)
            return s;
        if (key < low) {
            low = key;
            best = s;
        }
    }
    return best;
}

/* `record_batch` of n events at `now`, one at a time in input order. With `ids`, first resolves
 * the NPC ids into `rows` and checks the memory types (0..4) and saliences (finite): returns -2
 * (an unknown or removed id), -4 (a type), -5 (a salience) or -6 (a row whose every slot is
 * pinned, which numpy's checks look at) before anything is written; without, `rows` holds the
 * rows of live NPCs and the events are checked. Saliences are clipped to [0, 1] here.
 *
 * Each event: what ScalarPaths.record_one does with the rules of npc_mind.memory.rules, which is
 * what the numpy rounds do (each NPC's events in input order; NPCs never share memories). A
 * matching memory (same entity and type) is refreshed (last = now, the forget report cleared)
 * and, with at least the refractory period since its last access, rehearsed (k + 1,
 * E' = max(E, E_event), S' = min(S (1 + alpha ln(1 + k') E'), max S)) and, with E' >= the
 * consolidation threshold, consolidates the entity's other memories (S x f,
 * f = 1 + gain ln(1 + k') E', capped). Otherwise a new memory takes the row's lowest free slot,
 * or, in a full row, the slot of the first lowest eviction key (mk_row_keys; kept current while
 * the events are the same row's, as the rounds keep theirs: a key kept current and one computed
 * again at `now` have the same bits, since a memory accessed now has R = 1). ln(1 + k) from the
 * table the log loop made, or the log loop beyond it.
 *
 * With a `log`, each rehearsal, eviction (of a held memory) and formation is logged, in input
 * order, an eviction before the formation it made room for. Returns how many were logged.
 * No links or tags: the caller leaves those pools to numpy. */
int64_t MK_FN(mk_record)(mk_pool *pool, const int64_t *ids, int64_t *rows, const int64_t *entities,
                         const int8_t *types, const double *saliences, int64_t n, double now, int32_t clamp,
                         mk_log *log)
{
    const int64_t cap = pool->capacity;
    if (ids) { /* the checks of Recorder.record_batch, before anything is written */
        for (int64_t i = 0; i < n; i++) {
            const int64_t id = ids[i];
            if (id < 0 || id >= pool->next_id || pool->row_of_id[id] < 0)
                return -2;
            const int64_t row = rows[i] = pool->row_of_id[id];
            if (types[i] < 0 || types[i] > 4)
                return -4;
            if (saliences[i] - saliences[i] != 0.0) /* not finite */
                return -5;
            if (pool->pinned_slots[row] >= cap) /* a new memory may find no room: numpy's check */
                return -6;
        }
    }
    int64_t logged = 0;
#define MK_LOG(what, i, e, t)                                                                       \
    do {                                                                                            \
        if (log) {                                                                                  \
            log->kind[logged] = (int8_t)pool->what;                                                 \
            log->event[logged] = (i);                                                               \
            log->entity[logged] = (e);                                                              \
            log->type[logged] = (t);                                                                \
            logged++;                                                                               \
        }                                                                                           \
    } while (0)
    const double alpha = pool->alpha, refractory = pool->refractory, max_stability = pool->max_stability;
    const double weight_r = pool->weight_r, weight_e = pool->weight_e;
    const double min_salience = pool->min_salience, gain = pool->gain;
    int64_t *hits = pool->cand_flat; /* at least capacity cells each */
    int64_t *same = pool->cand_query;
    double *row_keys = pool->cand_r;
    int64_t keyed_row = -1; /* the row whose eviction keys row_keys holds, current */
    for (int64_t i = 0; i < n; i++) {
        if (i + MK_AHEAD < n && rows[i + MK_AHEAD] != rows[i + MK_AHEAD - 1])
            MK_ROW_AHEAD(pool, rows[i + MK_AHEAD] * cap, cap);
        const int64_t row = rows[i], base = row * cap, wanted = entities[i];
        const int8_t wanted_type = types[i];
        const double given = saliences[i]; /* checks.checked_saliences: np.clip into [0, 1] */
        const double event_salience = (given >= 0.0 && given <= 1.0) ? given : (given < 0.0 ? 0.0 : 1.0);
        int64_t match = -1, others = 0;
        const int64_t count = MK_FN(mk_hash_hits)(pool->hash + base, cap, mk_hash(wanted), hits);
        for (int64_t c = 0; c < count; c++) {
            const int64_t s = hits[c];
            if (pool->entity[base + s] != wanted)
                continue;
            const int8_t t = pool->type[base + s];
            if (t == wanted_type)
                match = s;
            else if (t >= 0)
                same[others++] = s;
        }
        int32_t keyed = keyed_row == row;
        if (match >= 0) {
            const int64_t f = base + match;
            const double before = pool->last[f];
            pool->last[f] = now;
            pool->reported[f] = 0;
            if ((now - before) >= refractory) { /* rules.rehearses */
                const int64_t k = pool->recalls[f] + 1;
                pool->recalls[f] = k;
                const double held = pool->salience[f];
                const double e = (held >= event_salience || held != held) ? held : event_salience;
                pool->salience[f] = e;
                double ln = 1.0 + (double)k; /* rules.log1p_count */
                if (k < pool->ln_size)
                    ln = pool->ln_table[k];
                else
                    mk_run(pool->log_loop, pool->log_data, &ln, 1);
                const double s = pool->stability[f] * (1.0 + alpha * ln * e); /* rules.rehearsed_stability */
                pool->stability[f] = (s <= max_stability || s != s) ? s : max_stability;
                MK_LOG(kind_rehearsed, i, wanted, wanted_type);
                if (others && pool->consolidate && e >= min_salience) { /* rules.consolidated */
                    const double factor = 1.0 + gain * ln * e;         /* rules.consolidation_factor */
                    for (int64_t j = 0; j < others; j++) {
                        const int64_t g = base + same[j];
                        const double b = pool->stability[g] * factor;
                        pool->stability[g] = (b <= max_stability || b != b) ? b : max_stability;
                    }
                    keyed_row = -1; /* other slots' S changed: their keys are stale */
                    keyed = 0;
                }
            }
            if (keyed) /* accessed now: R is exactly 1 (rules.fresh_eviction_key) */
                row_keys[match] = pool->pinned[f] ? __builtin_inf() : 1.0 * weight_r + pool->salience[f] * weight_e;
            continue;
        }
        int64_t slot = 0;
        if (pool->used_slots[row] < cap) {
            while (pool->type[base + slot] >= 0) /* the lowest free slot (key -2) */
                slot++;
            pool->used_slots[row] += 1;
        } else {
            if (!keyed) {
                MK_FN(mk_row_keys)(pool, base, now, clamp, row_keys);
                keyed_row = row;
                keyed = 1;
            }
            slot = MK_FN(mk_argmin)(row_keys, cap);
            if (pool->type[base + slot] >= 0)
                MK_LOG(kind_evicted, i, pool->entity[base + slot], pool->type[base + slot]);
        }
        const int64_t f = base + slot;
        pool->entity[f] = wanted;
        pool->hash[f] = mk_hash(wanted);
        pool->type[f] = wanted_type;
        pool->last[f] = now;
        const double s0 = pool->base_stability[wanted_type] * (0.5 + event_salience); /* rules.initial_stability */
        pool->stability[f] = (s0 <= max_stability || s0 != s0) ? s0 : max_stability;
        pool->salience[f] = event_salience;
        pool->recalls[f] = 1;
        pool->pinned[f] = 0;
        pool->reported[f] = 0;
        if (keyed)
            row_keys[slot] = 1.0 * weight_r + event_salience * weight_e;
        MK_LOG(kind_formed, i, wanted, wanted_type);
    }
#undef MK_LOG
    return logged;
}
