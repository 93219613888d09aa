/* Declarations shared by memkernel.c and cffi's cdef (the loader reads this file for both: no
 * preprocessor lines here; the includer brings <stdint.h>). Every kernel function exists once per
 * dispatch level, suffixed _baseline (x86-64: SSE2), _avx2 and _avx512 (AVX-512 F/BW/VL). */

/* A numpy ufunc's inner loop for float64 -> float64 (numpy's PyUFuncGenericFunction). */
typedef void (*mk_loop)(char **args, const intptr_t *dimensions, const intptr_t *steps, void *data);

/* A pool's flat columns (capacity slots per row), its id map, the parameters of its query and
 * record rules, numpy's exp and log loops, and the candidate buffers (block x capacity cells
 * each; the record's scratch too). */
typedef struct {
    uint16_t *hash;
    int64_t *entity;
    int8_t *type;
    double *last;
    double *stability;
    double *salience;
    int64_t *recalls;
    uint8_t *reported;
    uint8_t *pinned;
    int64_t capacity;
    const int64_t *row_of_id; /* NPC id -> row (-1: removed) */
    int64_t next_id;          /* ids at or above it were never added */
    double threshold;         /* forget_threshold */
    double min_salience;      /* consolidation_min_salience */
    double gain;              /* consolidation_factor x alpha */
    double max_stability;
    int32_t consolidate;      /* consolidation_factor != 0 */
    mk_loop exp_loop;         /* np.exp's float64 loop, and its data */
    void *exp_data;
    mk_loop log_loop;         /* np.log's float64 loop, and its data */
    void *log_data;
    const double *ln_table;   /* ln(1 + k) for k < ln_size, made by the log loop (mk_fill_ln) */
    int64_t ln_size;
    int64_t block;            /* queries per block: their candidates fit the buffers */
    int64_t *cand_query;
    int64_t *cand_flat;
    double *cand_r;
    /* what mk_record also reads */
    int64_t *used_slots;          /* per row: occupied slots */
    const int64_t *pinned_slots;  /* per row: pinned slots */
    const double *base_stability; /* per memory type */
    double alpha;
    double refractory;            /* rehearsal_refractory_s */
    double weight_r;              /* eviction_weight_r */
    double weight_e;              /* eviction_weight_e */
    double floor;                 /* EXPONENT_FLOOR: R's exponent is at least this in an eviction key */
    int32_t kind_rehearsed;       /* the event log's EventKind codes */
    int32_t kind_evicted;
    int32_t kind_formed;
} mk_pool;

/* mk_record's event log (NULL: the pool logs none): up to 2 entries per event, in input order. */
typedef struct {
    int8_t *kind;
    int64_t *event; /* the event's position in the batch */
    int64_t *entity;
    int8_t *type;
} mk_log;

const char *mk_build_id(void);
/* The widest level this CPU runs: 0 baseline, 1 avx2, 2 avx512. */
int32_t mk_cpu_level(void);
/* Take np.exp's and np.log's float64 loops from the ufunc objects (numpy's public PyUFuncObject
 * layout: the first loop whose types are (double, double), the one numpy's type resolution picks):
 * 0, or -1 when a ufunc does not look like one (not 1 input, 1 output, or no float64 loop). */
int32_t mk_take_loops(mk_pool *pool, const void *exp_ufunc, const void *log_ufunc);
/* ln(1 + k) for k < n into table, with the log loop (the bits of one call per k). */
void mk_fill_ln(mk_pool *pool, double *table, int64_t n);
/* Apply exp (which 0) or log (1) to n contiguous doubles in place: the loader's check of them. */
void mk_apply(mk_pool *pool, int32_t which, double *values, int64_t n);

int64_t mk_query_baseline(mk_pool *pool, const int64_t *ids, int64_t *rows, const int64_t *entities, int64_t m,
                          double now, int32_t clamp, int32_t wake, double *out);
int64_t mk_query_avx2(mk_pool *pool, const int64_t *ids, int64_t *rows, const int64_t *entities, int64_t m,
                      double now, int32_t clamp, int32_t wake, double *out);
int64_t mk_query_avx512(mk_pool *pool, const int64_t *ids, int64_t *rows, const int64_t *entities, int64_t m,
                        double now, int32_t clamp, int32_t wake, double *out);

int64_t mk_record_baseline(mk_pool *pool, const int64_t *ids, int64_t *rows, const int64_t *entities, const int8_t *types,
                          const double *saliences, int64_t n, double now, int32_t clamp, mk_log *log);
int64_t mk_record_avx2(mk_pool *pool, const int64_t *ids, int64_t *rows, const int64_t *entities, const int8_t *types,
                          const double *saliences, int64_t n, double now, int32_t clamp, mk_log *log);
int64_t mk_record_avx512(mk_pool *pool, const int64_t *ids, int64_t *rows, const int64_t *entities, const int8_t *types,
                          const double *saliences, int64_t n, double now, int32_t clamp, mk_log *log);

void mk_retrievability_baseline(const mk_pool *pool, const double *last, const double *stability, int64_t n,
                                double now, double floor, double *out);
void mk_retrievability_avx2(const mk_pool *pool, const double *last, const double *stability, int64_t n,
                            double now, double floor, double *out);
void mk_retrievability_avx512(const mk_pool *pool, const double *last, const double *stability, int64_t n,
                              double now, double floor, double *out);

/* MemoryPool.strongest's look at m pool rows (memkernel_body.h): the entity and R of each row's
 * strongest working memory of an entity (0: anyone) and a type mask above an R floor. */
void mk_strongest_baseline(mk_pool *pool, const int64_t *rows, const int64_t *entities, const int64_t *masks,
                           const double *floors, int64_t m, double now, int64_t *out_entity, double *out_r);
void mk_strongest_avx2(mk_pool *pool, const int64_t *rows, const int64_t *entities, const int64_t *masks,
                       const double *floors, int64_t m, double now, int64_t *out_entity, double *out_r);
void mk_strongest_avx512(mk_pool *pool, const int64_t *rows, const int64_t *entities, const int64_t *masks,
                         const double *floors, int64_t m, double now, int64_t *out_entity, double *out_r);

/* MemoryPool.pop_forgotten's scan of the pool's first `rows` rows (memkernel_body.h): the flat
 * slots of the memories it reports now into cells, their forget times into due (each room for
 * rows x capacity); how many. */
int64_t mk_forgotten_baseline(mk_pool *pool, int64_t rows, double factor, double now, int64_t *cells, double *due);
int64_t mk_forgotten_avx2(mk_pool *pool, int64_t rows, double factor, double now, int64_t *cells, double *due);
int64_t mk_forgotten_avx512(mk_pool *pool, int64_t rows, double factor, double now, int64_t *cells, double *due);

/* Utility scoring (npc_mind.utility.batch.BatchScorer: a definition's curves on N NPCs' inputs,
 * then each behavior's weighted sum or product and its vetoes), for float64. Per stack row
 * (rules.py's pipeline, its steps in the numpy batch's order): `row_key` the input it reads,
 * `row_family` its shape (the MK_U_* codes of utility_body.h), `row_steps` which optional steps
 * its family group runs (bits: 1 range, 2 domain, 4 power, 8 invert, 16 power with the exponent
 * spread to the row's width, as the numpy code spreads a small batch's parameter columns), and `row_params`, 12
 * doubles: range low, scale, floor, ceiling; domain low, high; the shape's four parameters;
 * invert sign, shift. Behaviors: weighted-sum terms (`sum_start` B + 1 offsets into `sum_row`,
 * `sum_weight`: weight x behavior weight), products (`product_start` P + 1 offsets into
 * `product_row`, `product_weight`, `product_compensation`; `product_behavior`,
 * `product_behavior_weight`), vetoes (`veto_row`, `veto_threshold`, `veto_behavior`). */
typedef struct {
    int64_t rows;
    int64_t keys;
    int64_t behaviors;
    const int64_t *row_key;
    const int32_t *row_family;
    const int32_t *row_steps;
    const double *row_params;
    const int64_t *sum_start;
    const int64_t *sum_row;
    const double *sum_weight;
    int64_t products;
    int32_t product_powered;  /* 0 when every product weight is 1 (no power taken) */
    const int64_t *product_start;
    const int64_t *product_row;
    const double *product_weight;
    const double *product_compensation;
    const int64_t *product_behavior;
    const double *product_behavior_weight;
    int64_t vetoes;
    const int64_t *veto_row;
    const double *veto_threshold;
    const int64_t *veto_behavior;
    int64_t table_points;     /* the table group's points, stacked as numpy's np.interp gets them */
    const double *table_xp;
    const double *table_fp;
    const double *table_slopes; /* (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]), as np.interp's */
    mk_loop exp_loop;         /* numpy's float64 loops: exp, log, sin (one input), power (two) */
    void *exp_data;
    mk_loop log_loop;
    void *log_data;
    mk_loop sin_loop;
    void *sin_data;
    mk_loop power_loop;
    void *power_data;
} mk_utility;

/* NPCs scored per block (the work buffer holds rows + 1 + behaviors rows of this many doubles). */
int64_t mk_utility_block(void);
/* Take np.exp's, np.log's, np.sin's and np.power's float64 loops (as mk_take_loops): 0 or -1. */
int32_t mk_take_utility_loops(mk_utility *plan, const void *exp_ufunc, const void *log_ufunc,
                              const void *sin_ufunc, const void *power_ufunc);
/* Apply one of the plan's loops to n contiguous doubles in place (which: 0 exp, 1 log, 2 sin,
 * 3 power with `exponent`): the loader's check of them. */
void mk_utility_apply(const mk_utility *plan, int32_t which, double *values, int64_t n, double exponent);

/* The scores (n, B) row-major into `out` of n NPCs whose inputs are `inputs[key][0..n)`, and the
 * NaN inputs of each key into `nan_counts` (keys long); returns how many NaN inputs in all. `scores`, when not NULL, receives every
 * row's curve output (rows x n, row-major); `work` holds (rows + 1 + behaviors) x mk_utility_block() doubles. */
int64_t mk_utility_score_baseline(const mk_utility *plan, const double *const *inputs, int64_t n, double *out,
                               int64_t *nan_counts, double *work, double *scores);
int64_t mk_utility_score_avx2(const mk_utility *plan, const double *const *inputs, int64_t n, double *out,
                           int64_t *nan_counts, double *work, double *scores);
int64_t mk_utility_score_avx512(const mk_utility *plan, const double *const *inputs, int64_t n, double *out,
                             int64_t *nan_counts, double *work, double *scores);

/* One selector definition's repeated-choice check (npc_mind.utility.compiled.ChoiceCheck), for a
 * definition whose choice repeats (npc_mind.utility.selector.choice_repeats: no commitment, no
 * cooldown, top_n 1): its plan, its momentum and tie tolerance, the guard (see mk_choice_holds)
 * and one NPC's scratch: `work` as mk_utility_score's, `out` behaviors long, `nan_counts` keys long. */
typedef struct {
    const mk_utility *plan;
    double momentum;
    double tie_tolerance;
    double guard;
    double *work;
    double *out;
    int64_t *nan_counts;
} mk_choice_check;

/* 1 when a selector whose running behavior is `answer` chooses it again for one NPC's inputs
 * `values` (the plan's keys in order) under selector.decide, by more than the guard on every side;
 * 0 otherwise (then the caller asks the per-NPC path). `check` is an mk_choice_check. */
int32_t mk_choice_holds_baseline(void *check, const double *values, int64_t answer);
int32_t mk_choice_holds_avx2(void *check, const double *values, int64_t answer);
int32_t mk_choice_holds_avx512(void *check, const double *values, int64_t answer);
