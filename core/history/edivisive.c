/* E-divisive means with a permutation test (see edivisive.h). */
#include "history/edivisive.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util/rng.h"

void dlb_cp_opts_default(struct dlb_cp_opts *o)
{
    o->alpha = DLB_CP_ALPHA;
    o->permutations = DLB_CP_PERMUTATIONS;
    o->min_size = DLB_CP_MIN_SIZE;
    o->seed = 1;
}

/* Scratch for one segment of up to `cap` points: its values with their
 * ranks among themselves (the ranks travel with the values when they are
 * shuffled), two Fenwick trees over the ranks (count and sum), and the
 * within-prefix and within-suffix distance sums. */
struct pair {
    double v;
    size_t i;
};

struct work {
    size_t cap;
    double *v, *fc, *fs, *wa, *wb;
    size_t *rank;
    struct pair *sorted;
};

static int work_init(struct work *w, size_t cap)
{
    w->cap = cap;
    w->v = malloc(cap * sizeof *w->v);
    w->fc = malloc((cap + 1) * sizeof *w->fc);
    w->fs = malloc((cap + 1) * sizeof *w->fs);
    w->wa = malloc((cap + 1) * sizeof *w->wa);
    w->wb = malloc((cap + 1) * sizeof *w->wb);
    w->rank = malloc(cap * sizeof *w->rank);
    w->sorted = malloc(cap * sizeof *w->sorted);
    return w->v && w->fc && w->fs && w->wa && w->wb && w->rank && w->sorted ? 0 : -1;
}

static void work_free(struct work *w)
{
    free(w->v);
    free(w->fc);
    free(w->fs);
    free(w->wa);
    free(w->wb);
    free(w->rank);
    free(w->sorted);
}

static int by_value(const void *a, const void *b)
{
    double x = ((const struct pair *)a)->v, y = ((const struct pair *)b)->v;
    return (x > y) - (x < y);
}

/* Load x[0..n) into w with the ranks of the values (ties in any order:
 * equal values are at distance 0 whichever side of each other they
 * rank). */
static void work_load(struct work *w, const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        w->v[i] = x[i];
        w->sorted[i] = (struct pair){x[i], i};
    }
    qsort(w->sorted, n, sizeof *w->sorted, by_value);
    for (size_t r = 0; r < n; r++)
        w->rank[w->sorted[r].i] = r;
}

/* sum over the inserted values of |x - value|, then insert x at rank r. */
static double fenwick_insert(struct work *w, size_t n, size_t r, double x,
                             double *cnt_all, double *sum_all)
{
    double c = 0, s = 0;
    for (size_t i = r; i > 0; i -= i & -i) {
        c += w->fc[i];
        s += w->fs[i];
    }
    double d = x * c - s + (*sum_all - s) - x * (*cnt_all - c);
    for (size_t i = r + 1; i <= n; i += i & -i) {
        w->fc[i] += 1;
        w->fs[i] += x;
    }
    *cnt_all += 1;
    *sum_all += x;
    return d;
}

/* The best split of the n points in w, as edivisive.h defines Q. */
static int best_split(struct work *w, size_t n, size_t min_size, size_t *t_out,
                      double *q_out)
{
    if (min_size < 2 || n < 2 * min_size)
        return -1;
    double c, s;
    memset(w->fc, 0, (n + 1) * sizeof *w->fc);
    memset(w->fs, 0, (n + 1) * sizeof *w->fs);
    c = s = 0;
    w->wa[0] = 0;
    for (size_t k = 0; k < n; k++)
        w->wa[k + 1] = w->wa[k] + fenwick_insert(w, n, w->rank[k], w->v[k], &c, &s);
    memset(w->fc, 0, (n + 1) * sizeof *w->fc);
    memset(w->fs, 0, (n + 1) * sizeof *w->fs);
    c = s = 0;
    w->wb[n] = 0;
    for (size_t k = n; k-- > 0;)
        w->wb[k] = w->wb[k + 1] + fenwick_insert(w, n, w->rank[k], w->v[k], &c, &s);
    double all = w->wa[n], best = -INFINITY, len = (double)n;
    size_t best_t = min_size;
    for (size_t t = min_size; t + min_size <= n; t++) {
        double k = (double)t, m = len - k;
        double within_a = w->wa[t], within_b = w->wb[t];
        double between = all - within_a - within_b;
        double q = 2 * between / len - 2 * m * within_a / (len * (k - 1)) -
                   2 * k * within_b / (len * (m - 1));
        if (q > best) {
            best = q;
            best_t = t;
        }
    }
    *t_out = best_t;
    *q_out = best;
    return 0;
}

int dlb_edivisive_best_split(const double *x, size_t n, size_t min_size,
                             size_t *t, double *q)
{
    struct work w;
    int rc = -1;
    if (n && work_init(&w, n) == 0) {
        work_load(&w, x, n);
        rc = best_split(&w, n, min_size, t, q);
    }
    if (n)
        work_free(&w);
    return rc;
}

/* One segment of the series: [a, b), and its best split in the order
 * observed (t relative to a; ok 0 when it is too short to split). */
struct segment {
    size_t a, b, t;
    double q;
    int ok;
};

static void segment_eval(struct work *w, const double *x, struct segment *s,
                         size_t min_size)
{
    work_load(w, x + s->a, s->b - s->a);
    s->ok = best_split(w, s->b - s->a, min_size, &s->t, &s->q) == 0;
}

/* Fisher-Yates over the value-rank pairs. */
static void shuffle(struct work *w, size_t n, struct dlb_rng *rng)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)dlb_rng_below(rng, i);
        double v = w->v[i - 1];
        size_t r = w->rank[i - 1];
        w->v[i - 1] = w->v[j];
        w->rank[i - 1] = w->rank[j];
        w->v[j] = v;
        w->rank[j] = r;
    }
}

/* The permutation test of the largest Q over the segments: each
 * permutation shuffles every segment within itself and takes the largest
 * Q among them. Stops as soon as the p-value cannot reach alpha. */
static double permutation_p(struct work *w, const double *x, const struct segment *seg,
                            size_t n_seg, double observed, const struct dlb_cp_opts *o,
                            struct dlb_rng *rng)
{
    long reach = 0, done = 0;
    /* p = (1 + reach) / (1 + R) > alpha once reach exceeds this. */
    double give_up = o->alpha * (o->permutations + 1) - 1;
    for (int r = 0; r < o->permutations; r++) {
        double most = -INFINITY;
        for (size_t i = 0; i < n_seg; i++) {
            size_t t, len = seg[i].b - seg[i].a;
            double q;
            if (len < 2 * o->min_size)
                continue;
            work_load(w, x + seg[i].a, len);
            shuffle(w, len, rng);
            if (best_split(w, len, o->min_size, &t, &q) == 0 && q > most)
                most = q;
        }
        done++;
        /* A relative tolerance: a permutation that reproduces the
         * observed order must count as reaching it despite rounding. */
        if (most >= observed - 1e-12 * fabs(observed))
            reach++;
        if ((double)reach > give_up)
            return (1.0 + (double)reach) / (1.0 + (double)done);
    }
    return (1.0 + (double)reach) / (1.0 + (double)o->permutations);
}

static int by_at(const void *a, const void *b)
{
    size_t x = ((const struct dlb_cp *)a)->at, y = ((const struct dlb_cp *)b)->at;
    return (x > y) - (x < y);
}

dlb_status dlb_edivisive(const double *x, size_t n, const struct dlb_cp_opts *o,
                         struct dlb_cp **out, size_t *n_out, struct dlb_error *err)
{
    *out = NULL;
    *n_out = 0;
    if (o->min_size < 2 || !(o->alpha > 0 && o->alpha < 1) || o->permutations < 1)
        return dlb_errorf(err, DLB_ERR_INPUT, "change points: min_size %zu (>= 2), "
                          "alpha %g (0 to 1) and permutations %d (>= 1) out of range",
                          o->min_size, o->alpha, o->permutations);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return dlb_errorf(err, DLB_ERR_INPUT, "change points: point %zu of the "
                              "series is not a finite number", i);
    if (n < 2 * o->min_size)
        return DLB_OK;
    size_t most = n / o->min_size;
    struct segment *seg = calloc(most + 1, sizeof *seg);
    struct dlb_cp *cps = calloc(most + 1, sizeof *cps);
    struct work w;
    int ok = work_init(&w, n) == 0;
    if (!seg || !cps || !ok) {
        free(seg);
        free(cps);
        work_free(&w);
        return dlb_errorf(err, DLB_ERR_NOMEM, "change points: out of memory");
    }
    struct dlb_rng rng;
    dlb_rng_seed(&rng, o->seed);
    size_t n_seg = 1, n_cp = 0;
    seg[0] = (struct segment){0, n, 0, 0, 0};
    segment_eval(&w, x, &seg[0], o->min_size);
    for (;;) {
        size_t pick = n_seg;
        for (size_t i = 0; i < n_seg; i++)
            if (seg[i].ok && (pick == n_seg || seg[i].q > seg[pick].q))
                pick = i;
        if (pick == n_seg || n_seg > most)
            break;
        double p = permutation_p(&w, x, seg, n_seg, seg[pick].q, o, &rng);
        if (p > o->alpha)
            break;
        struct segment left = seg[pick], right = seg[pick];
        size_t at = seg[pick].a + seg[pick].t;
        cps[n_cp++] = (struct dlb_cp){at, seg[pick].q, p};
        left.b = at;
        right.a = at;
        segment_eval(&w, x, &left, o->min_size);
        segment_eval(&w, x, &right, o->min_size);
        seg[pick] = left;
        seg[n_seg++] = right;
    }
    work_free(&w);
    free(seg);
    qsort(cps, n_cp, sizeof *cps, by_at);
    if (!n_cp) {
        free(cps);
        cps = NULL;
    }
    *out = cps;
    *n_out = n_cp;
    return DLB_OK;
}
