/* Utility scoring, included once per dispatch level by memkernel.c after memkernel_body.h (MK_FN
 * names that level's copy). What npc_mind.utility.batch.BatchScorer computes with numpy for
 * float64, with the rules of npc_mind.utility.rules in the numpy batch's order of operations:
 * every row's curve bit for bit (the transcendentals are numpy's own loops, called over a block
 * as numpy calls them over a row), products, vetoes and the behavior weight bit for bit; a
 * weighted sum in the order of its considerations (numpy: a matrix product, in BLAS's order).
 * tests/test_utility_kernel.py holds it to that at every level. */

#ifndef MK_U_CODES
#define MK_U_CODES
/* Family codes (npc_mind.utility.compiled.FAMILY_CODES) and the optional steps of a row. */
enum { MK_U_SATURATING, MK_U_POLYNOMIAL, MK_U_LOGISTIC, MK_U_LOGIT, MK_U_NORMAL, MK_U_SINE, MK_U_STEP, MK_U_TABLE };
enum { MK_U_RANGE = 1, MK_U_DOMAIN = 2, MK_U_POWER = 4, MK_U_INVERT = 8, MK_U_SPREAD = 16 };
#define MK_U_PARAMS 13 /* per row: range 4, domain 2, shape 5, invert 2 */
#define MK_U_LOGIT_EPSILON 1e-9 /* rules.LOGIT_EPSILON */
#define MK_CHECK_KEYS 8 /* inputs a checked definition reads at most (selectors.MAX_ANSWERED_INPUTS) */

/* rules.clip for one double (np.clip: NaN stays NaN, a bound is taken only beyond it). */
static inline double mk_u_clip(double x, double low, double high)
{
    return x < low ? low : (x > high ? high : x);
}

/* np.maximum(x, floor): NaN stays NaN; on a tie numpy gives its second operand. */
static inline double mk_u_at_least(double x, double floor)
{
    return (x > floor || x != x) ? x : floor;
}

/* np.interp(v, xp, fp) for one double (numpy's arr_interp): NaN stays NaN, fp's ends beyond xp's,
 * the point's own y on a point, else the segment's slope from its left point (from its right one
 * if that gives NaN, and the shared y of a flat segment if both do). j: the last point at or
 * below v, as numpy's binary search finds it. */
static inline double mk_u_interp(const mk_utility *plan, double v)
{
    const double *xp = plan->table_xp, *fp = plan->table_fp;
    const int64_t last = plan->table_points - 1;
    if (v != v)
        return v;
    if (v > xp[last])
        return fp[last];
    if (v < xp[0])
        return fp[0];
    int64_t low = 0, high = last; /* xp[low] <= v, and v < xp[high] unless high == last */
    if (v >= xp[last])
        low = last;
    while (high - low > 1) {
        const int64_t mid = low + (high - low) / 2;
        if (v >= xp[mid])
            low = mid;
        else
            high = mid;
    }
    const int64_t j = low;
    if (j == last || xp[j] == v)
        return fp[j];
    const double slope = plan->table_slopes[j];
    double y = slope * (v - xp[j]) + fp[j];
    if (y != y) {
        y = slope * (v - xp[j + 1]) + fp[j + 1];
        if (y != y && fp[j] == fp[j + 1])
            y = fp[j];
    }
    return y;
}

/* rules.unit, as numpy's fmax(y, 0) then fmin(y, 1) (NaN -> 0; a tie gives the second operand). */
static inline double mk_u_unit(double y)
{
    const double low = y > 0.0 ? y : 0.0;
    return low < 1.0 ? low : 1.0;
}
#endif

/* One stack row over `len` NPCs: the curve's pipeline (rules.normalised, clamped, the family's
 * shape, inverted, finished) from x into r, one simple pass per step (each pass vectorises);
 * `spare` holds len doubles of scratch. */
static void MK_FN(mk_u_row)(const mk_utility *plan, int64_t row, const double *x, double *r, int64_t len,
                            double *spare)
{
    const double *p = plan->row_params + row * MK_U_PARAMS;
    const int32_t steps = plan->row_steps[row];
    const double s0 = p[6], s1 = p[7], s2 = p[8], s3 = p[9], s4 = p[10];
    const int32_t family = plan->row_family[row];
    if (family == MK_U_SATURATING && steps == MK_U_DOMAIN) { /* the common row, in one pass */
        const double low = p[4], high = p[5];
        for (int64_t i = 0; i < len; i++) {
            const double u = mk_u_clip(x[i], low, high);
            r[i] = mk_u_unit(u / (u + s0));
        }
        return;
    }
    if (steps & MK_U_RANGE) {
        const double low = p[0], scale = p[1], floor = p[2], ceiling = p[3];
        for (int64_t i = 0; i < len; i++)
            r[i] = mk_u_clip((x[i] - low) * scale, floor, ceiling);
        x = r;
    }
    if (steps & MK_U_DOMAIN) {
        const double low = p[4], high = p[5];
        for (int64_t i = 0; i < len; i++)
            r[i] = mk_u_clip(x[i], low, high);
        x = r;
    }
    /* the shape up to its transcendental (or all of it) */
    switch (family) {
    case MK_U_SATURATING: /* u / (u + k) */
        for (int64_t i = 0; i < len; i++)
            r[i] = x[i] / (x[i] + s0);
        break;
    case MK_U_POLYNOMIAL: /* t = at_least(u - c, floor); power(t, k) * m + b */
        for (int64_t i = 0; i < len; i++)
            r[i] = mk_u_at_least(x[i] - s2, s4);
        if (steps & MK_U_SPREAD) { /* the numpy code's exponent column spread to its rows' width */
            for (int64_t i = 0; i < len; i++)
                spare[i] = s1;
            mk_run_power(plan, r, spare, sizeof(double), r, len);
        } else if (steps & MK_U_POWER) {
            mk_run_power(plan, r, &p[7], 0, r, len);
        }
        for (int64_t i = 0; i < len; i++)
            r[i] = r[i] * s0 + s3;
        break;
    case MK_U_LOGISTIC: /* k / (exp((u - c) * -m) + 1) + b */
        for (int64_t i = 0; i < len; i++)
            r[i] = (x[i] - s2) * -s0;
        mk_run(plan->exp_loop, plan->exp_data, r, len);
        for (int64_t i = 0; i < len; i++)
            r[i] = s1 / (r[i] + 1.0) + s3;
        break;
    case MK_U_LOGIT: /* z = clip(u - c, eps, 1 - eps); log(z / (1 - z)) * m + b */
        for (int64_t i = 0; i < len; i++) {
            const double z = mk_u_clip(x[i] - s1, MK_U_LOGIT_EPSILON, 1.0 - MK_U_LOGIT_EPSILON);
            r[i] = z / (1.0 - z);
        }
        mk_run(plan->log_loop, plan->log_data, r, len);
        for (int64_t i = 0; i < len; i++)
            r[i] = r[i] * s0 + s2;
        break;
    case MK_U_NORMAL: /* t = (u - c) * inverse_k; exp(t * t * -0.5) * m + b */
        for (int64_t i = 0; i < len; i++) {
            const double t = (x[i] - s2) * s1;
            r[i] = t * t * -0.5;
        }
        mk_run(plan->exp_loop, plan->exp_data, r, len);
        for (int64_t i = 0; i < len; i++)
            r[i] = r[i] * s0 + s3;
        break;
    case MK_U_SINE: /* sin((u - c) * frequency) * m + b */
        for (int64_t i = 0; i < len; i++)
            r[i] = (x[i] - s2) * s1;
        mk_run(plan->sin_loop, plan->sin_data, r, len);
        for (int64_t i = 0; i < len; i++)
            r[i] = r[i] * s0 + s3;
        break;
    case MK_U_TABLE: /* v = (clip(u, first, last) - first) * inverse_span + shift; interp(v, ...) */
        for (int64_t i = 0; i < len; i++)
            r[i] = mk_u_interp(plan, (mk_u_clip(x[i], s0, s1) - s0) * s2 + s3);
        break;
    default: /* step: reached(u, threshold) * span + low */
        for (int64_t i = 0; i < len; i++) {
            const double reached = x[i] >= s0 ? 1.0 : (x[i] == x[i] ? 0.0 : __builtin_nan(""));
            r[i] = reached * s1 + s2;
        }
        break;
    }
    (void)s4;
    if (steps & MK_U_INVERT) {
        const double sign = p[11], shift = p[12];
        for (int64_t i = 0; i < len; i++)
            r[i] = r[i] * sign + shift;
    }
    for (int64_t i = 0; i < len; i++)
        r[i] = mk_u_unit(r[i]);
}

int64_t MK_FN(mk_utility_score)(const mk_utility *plan, const double *const *inputs, int64_t n, double *out,
                             int64_t *nan_counts, double *work, double *scores)
{
    const int64_t rows = plan->rows, behaviors = plan->behaviors;
    int64_t all_missing = 0;
    for (int64_t key = 0; key < plan->keys; key++) {
        const double *x = inputs[key];
        int64_t missing = 0;
        for (int64_t i = 0; i < n; i++)
            missing += x[i] != x[i];
        nan_counts[key] = missing;
        all_missing += missing;
    }
    double *factor = work + rows * MK_U_BLOCK, *acc = factor + MK_U_BLOCK;
    for (int64_t start = 0; start < n; start += MK_U_BLOCK) {
        const int64_t len = start + MK_U_BLOCK < n ? MK_U_BLOCK : n - start;
        for (int64_t row = 0; row < rows; row++) {
            double *r = work + row * MK_U_BLOCK;
            MK_FN(mk_u_row)(plan, row, inputs[plan->row_key[row]] + start, r, len, factor);
            if (scores) {
                for (int64_t i = 0; i < len; i++)
                    scores[row * n + start + i] = r[i];
            }
        }
        /* weighted sums: weight x behavior weight x score, in the considerations' order */
        for (int64_t b = 0; b < behaviors; b++) {
            double *total = acc + b * MK_U_BLOCK;
            for (int64_t i = 0; i < len; i++)
                total[i] = 0.0;
            for (int64_t t = plan->sum_start[b]; t < plan->sum_start[b + 1]; t++) {
                const double *s = work + plan->sum_row[t] * MK_U_BLOCK;
                const double w = plan->sum_weight[t];
                for (int64_t i = 0; i < len; i++)
                    total[i] = total[i] + w * s[i];
            }
        }
        /* products: f (^ weight), f + (1 - f) c f, multiplied in order, x the behavior weight */
        for (int64_t q = 0; q < plan->products; q++) {
            double *total = acc + plan->product_behavior[q] * MK_U_BLOCK;
            for (int64_t t = plan->product_start[q]; t < plan->product_start[q + 1]; t++) {
                const double *f = work + plan->product_row[t] * MK_U_BLOCK;
                if (plan->product_powered) { /* in place, as numpy's np.power(..., out=factors) */
                    for (int64_t i = 0; i < len; i++)
                        factor[i] = f[i];
                    mk_run_power(plan, factor, &plan->product_weight[t], 0, factor, len);
                    f = factor;
                }
                const double compensation = plan->product_compensation[t];
                const int first = t == plan->product_start[q];
                for (int64_t i = 0; i < len; i++) {
                    const double compensated = f[i] + (1.0 - f[i]) * compensation * f[i];
                    total[i] = first ? compensated : total[i] * compensated;
                }
            }
            const double weight = plan->product_behavior_weight[q];
            for (int64_t i = 0; i < len; i++)
                total[i] = total[i] * weight;
        }
        /* vetoes: a consideration below its threshold zeroes its behavior */
        for (int64_t v = 0; v < plan->vetoes; v++) {
            const double *s = work + plan->veto_row[v] * MK_U_BLOCK;
            const double threshold = plan->veto_threshold[v];
            double *total = acc + plan->veto_behavior[v] * MK_U_BLOCK;
            for (int64_t i = 0; i < len; i++)
                total[i] = s[i] < threshold ? 0.0 : total[i];
        }
        double *block_out = out + start * behaviors;
        for (int64_t i = 0; i < len; i++) {
            for (int64_t b = 0; b < behaviors; b++)
                block_out[i * behaviors + b] = acc[b * MK_U_BLOCK + i];
        }
    }
    return all_missing;
}

/* The repeated choice (see memkernel.h): the running behavior `answer` stays when, with its score
 * boosted by momentum (rules.boosted), it scores above 0 and no other behavior scores more than
 * the tie tolerance above it (rules.keeps_running; without commitment the margin is the tie
 * tolerance: rules.switch_margin). The per-NPC path scores with math's functions, the same numbers
 * as these to 1e-12 (rules.py), so each comparison must hold by `guard` x (1 + the largest score)
 * for its answer to be that path's too; a value or a score that is not finite says 0.
 * tests/test_choice_check.py holds it to the per-NPC choice. */
int32_t MK_FN(mk_choice_holds)(void *data, const double *values, int64_t answer)
{
    const mk_choice_check *check = (const mk_choice_check *)data;
    const mk_utility *plan = check->plan;
    const double *inputs[MK_CHECK_KEYS];
    if (plan->keys > MK_CHECK_KEYS || answer < 0 || answer >= plan->behaviors)
        return 0;
    for (int64_t key = 0; key < plan->keys; key++) {
        if (!(values[key] - values[key] == 0.0)) /* NaN or infinite */
            return 0;
        inputs[key] = values + key;
    }
    MK_FN(mk_utility_score)(plan, inputs, 1, check->out, check->nan_counts, check->work, 0);
    const double *score = check->out;
    const double running = score[answer] * (1.0 + check->momentum);
    double largest = running < 0.0 ? -running : running; /* the largest magnitude */
    for (int64_t b = 0; b < plan->behaviors; b++) {
        const double size = score[b] < 0.0 ? -score[b] : score[b];
        if (!(score[b] - score[b] == 0.0))
            return 0;
        largest = size > largest ? size : largest;
    }
    const double guard = check->guard * (1.0 + largest);
    if (!(running > guard))
        return 0;
    const double ceiling = running + check->tie_tolerance - guard;
    for (int64_t b = 0; b < plan->behaviors; b++) {
        if (b != answer && !(score[b] <= ceiling))
            return 0;
    }
    return 1;
}
