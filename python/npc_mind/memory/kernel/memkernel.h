/* Declarations shared by memkernel.c and cffi's cdef (the loader reads this file for both: no
 * preprocessor lines here; the includer brings <stdint.h>). Every kernel function exists once per
 * dispatch level, suffixed _baseline (x86-64: SSE2), _avx2 and _avx512 (AVX-512 F/BW/VL). */

/* A pool's flat columns (capacity slots per row) and the parameters of its query rules. */
typedef struct {
    const uint16_t *hash;
    const int64_t *entity;
    const int8_t *type;
    double *last;
    double *stability;
    const double *salience;
    int64_t *recalls;
    uint8_t *reported;
    const uint8_t *pinned;
    int64_t capacity;
    const int64_t *row_of_id; /* NPC id -> row (-1: removed) */
    int64_t next_id;          /* ids at or above it were never added */
    double threshold;       /* forget_threshold */
    double min_salience;    /* consolidation_min_salience */
    double gain;            /* consolidation_factor x alpha */
    double max_stability;
    int32_t consolidate;    /* consolidation_factor != 0 */
    const double *ln_table; /* ln(1 + k) for k < ln_size, computed by numpy (rules.log1p_counts) */
    int64_t ln_size;
} mk_pool;

const char *mk_build_id(void);
/* The widest level this CPU runs: 0 baseline, 1 avx2, 2 avx512. */
int32_t mk_cpu_level(void);

int64_t mk_match_baseline(const mk_pool *pool, const int64_t *ids, int64_t *rows, const int64_t *entities,
                          int64_t m, double now, int32_t exponents, int32_t clamp, int32_t wake,
                          int64_t *cand_query, int64_t *cand_flat, double *cand_x, int64_t room);
int64_t mk_match_avx2(const mk_pool *pool, const int64_t *ids, int64_t *rows, const int64_t *entities,
                      int64_t m, double now, int32_t exponents, int32_t clamp, int32_t wake,
                      int64_t *cand_query, int64_t *cand_flat, double *cand_x, int64_t room);
int64_t mk_match_avx512(const mk_pool *pool, const int64_t *ids, int64_t *rows, const int64_t *entities,
                        int64_t m, double now, int32_t exponents, int32_t clamp, int32_t wake,
                        int64_t *cand_query, int64_t *cand_flat, double *cand_x, int64_t room);

int64_t mk_select_baseline(mk_pool *pool, const int64_t *rows, const int64_t *entities, int64_t m,
                           int64_t count, const int64_t *cand_query, const int64_t *cand_flat,
                           const double *cand_r, double now, int32_t wake, int64_t *best, double *out,
                           int64_t room);
int64_t mk_select_avx2(mk_pool *pool, const int64_t *rows, const int64_t *entities, int64_t m,
                       int64_t count, const int64_t *cand_query, const int64_t *cand_flat,
                       const double *cand_r, double now, int32_t wake, int64_t *best, double *out,
                           int64_t room);
int64_t mk_select_avx512(mk_pool *pool, const int64_t *rows, const int64_t *entities, int64_t m,
                         int64_t count, const int64_t *cand_query, const int64_t *cand_flat,
                         const double *cand_r, double now, int32_t wake, int64_t *best, double *out,
                           int64_t room);

void mk_exponents_baseline(const double *last, const double *stability, int64_t n, double now,
                           int32_t clamp, double floor, double *out);
void mk_exponents_avx2(const double *last, const double *stability, int64_t n, double now,
                       int32_t clamp, double floor, double *out);
void mk_exponents_avx512(const double *last, const double *stability, int64_t n, double now,
                         int32_t clamp, double floor, double *out);
