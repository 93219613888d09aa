/* Declarations shared by memkernel.c and cffi's cdef (kernel.py reads this file for both:
 * no preprocessor lines here, the includer brings <stdint.h>). */
/* A pool's columns (flat, capacity slots per row), id map and parameters. */
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
    const int64_t *row_of_id;
    int64_t next_id;
    double threshold;     /* forget_threshold */
    double min_salience;  /* consolidation_min_salience */
    double gain;          /* consolidation_factor x alpha */
    double max_stability;
    int32_t consolidate;  /* consolidation_factor != 0 */
    int32_t exponential;  /* the curve: 1 exponential (x computed here), 0 power (R from the caller) */
    const double *ln_table; /* ln(1 + k) for k < ln_size, computed by numpy */
    int64_t ln_size;
} mk_pool;

/* Reusable buffers of one pool: rows of the queries, the candidates (query, flat slot, exponent
 * then R), and the lists mk_select hands back. cells: [rows increase, long-term wins, strong
 * hits, deferred hits]. */
typedef struct {
    int64_t *rows;
    int64_t *cand_query;
    int64_t *cand_flat;
    double *cand_x;
    int64_t room;
    int64_t *longterm_won;
    int64_t *strong;
    int64_t *deferred;
    int64_t cells[4];
} mk_scratch;

const char *mk_build_id(void);
int64_t mk_match(const mk_pool *pool, mk_scratch *sc, const int64_t *ids, const int64_t *entities, int64_t m,
                 double now, int32_t clamp);
int64_t mk_select(mk_pool *pool, mk_scratch *sc, const int64_t *entities, int64_t m, int64_t count,
                  const double *cand_r, const double *longterm_r, double now, int32_t wake, double *out);
