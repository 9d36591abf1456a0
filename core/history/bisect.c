/* The bisection's search (bisect.h). */
#include "history/bisect.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "stats/stats.h"

static void mean_var(const double *v, size_t n, double *mean, double *var)
{
    double m = 0, s = 0;
    for (size_t i = 0; i < n; i++)
        m += log(v[i]);
    m /= (double)n;
    for (size_t i = 0; i < n; i++)
        s += (log(v[i]) - m) * (log(v[i]) - m);
    *mean = m;
    *var = n > 1 ? s / (double)(n - 1) : 0;
}

/* The t value whose two-sided p-value is alpha, by bisection on the
 * p-value, which falls as t grows. */
static double t_quantile(double alpha, double df)
{
    double lo = 0, hi = 1e6;
    for (int i = 0; i < 200; i++) {
        double mid = (lo + hi) / 2;
        if (dlb_student_t_p(mid, df) > alpha)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

void dlb_pair_compare(const double *a, size_t na, const double *b, size_t nb,
                      double alpha_diff, double alpha_same, double least, double same,
                      struct dlb_pair_cmp *out)
{
    *out = (struct dlb_pair_cmp){NAN, NAN, NAN, NAN, DLB_PAIR_UNDECIDED};
    if (na < 1 || nb < 1)
        return;
    double ma, va, mb, vb;
    mean_var(a, na, &ma, &va);
    mean_var(b, nb, &mb, &vb);
    double d = mb - ma;
    out->ratio = exp(d);
    if (na < 2 || nb < 2)
        return;
    double wa = va / (double)na, wb = vb / (double)nb, se2 = wa + wb;
    if (!(se2 > 0)) {
        /* No spread at all (a synthetic clock without noise): the figures
         * are what they are. */
        out->lo = out->hi = out->ratio;
        out->p = d == 0 ? 1 : 0;
        out->verdict = fabs(d) < same ? DLB_PAIR_SAME : fabs(d) >= least
                       ? DLB_PAIR_DIFFERENT : DLB_PAIR_UNDECIDED;
        return;
    }
    double se = sqrt(se2);
    double df = se2 * se2 / ((na > 1 ? wa * wa / (double)(na - 1) : 0) +
                             (nb > 1 ? wb * wb / (double)(nb - 1) : 0));
    double q = t_quantile(alpha_diff, df), qs = t_quantile(alpha_same, df);
    out->p = dlb_student_t_p(d / se, df);
    out->lo = exp(d - q * se);
    out->hi = exp(d + q * se);
    if (out->p < alpha_diff && fabs(d) >= least)
        out->verdict = DLB_PAIR_DIFFERENT;
    else if (d - qs * se > -same && d + qs * se < same)
        out->verdict = DLB_PAIR_SAME;
}

dlb_status dlb_bisect_init(struct dlb_bisect *b, const char *const *shas, size_t n,
                           double alpha, size_t runs_min, size_t runs_max,
                           struct dlb_error *err)
{
    memset(b, 0, sizeof *b);
    if (n < 2 || runs_min < 2 || runs_max < runs_min || !(alpha > 0 && alpha < 1))
        return dlb_errorf(err, DLB_ERR_INPUT, "bisect: %zu commits (2 or more), runs "
                          "%zu to %zu (2 <= min <= max), alpha %g (0 to 1)", n, runs_min,
                          runs_max, alpha);
    if (!(b->c = calloc(n, sizeof *b->c)))
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        b->c[i].sha = shas[i];
    b->c[0].measured = b->c[n - 1].measured = 1;
    b->n = n;
    b->alpha = alpha;
    b->runs_min = runs_min;
    b->runs_max = runs_max;
    b->delta = NAN;
    b->state = DLB_BISECT_ENDPOINTS;
    return DLB_OK;
}

void dlb_bisect_free(struct dlb_bisect *b)
{
    for (size_t i = 0; b->c && i < b->n; i++)
        free(b->c[i].fig);
    free(b->c);
    memset(b, 0, sizeof *b);
}

void dlb_bisect_built(struct dlb_bisect *b, size_t i, int ok)
{
    if (i < b->n)
        b->c[i].built = ok ? 1 : -1;
}

dlb_status dlb_bisect_add(struct dlb_bisect *b, size_t i, double figure,
                          struct dlb_error *err)
{
    if (i >= b->n || !(figure > 0) || !isfinite(figure))
        return dlb_errorf(err, DLB_ERR_INPUT, "bisect: commit %zu: figure %g is not a "
                          "positive step time", i, figure);
    struct dlb_bisect_commit *c = &b->c[i];
    if (c->n_fig == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 8;
        double *v = realloc(c->fig, cap * sizeof *v);
        if (!v)
            return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
        c->fig = v;
        c->cap = cap;
    }
    c->fig[c->n_fig++] = figure;
    return DLB_OK;
}

static int usable(const struct dlb_bisect_commit *c)
{
    return c->measured && c->built == 1;
}

static void compare(const struct dlb_bisect *b, size_t i, size_t j,
                    struct dlb_pair_cmp *out)
{
    /* Until GOOD and BAD are told apart there is no change to scale by. */
    int ends = !isfinite(b->delta);
    /* A pair is judged again after every round of runs until it is
     * decided, up to runs_max - runs_min + 1 times: "different" is judged
     * at alpha divided by that many (Bonferroni over the looks), so that
     * repeating until decisive does not make a false difference likelier
     * than alpha. "Same" needs the whole 1 - alpha interval within half
     * the change, which a real change of the whole size cannot meet by
     * chance however often it is looked at. */
    double looks = (double)(b->runs_max - b->runs_min + 1);
    dlb_pair_compare(b->c[i].fig, b->c[i].n_fig, b->c[j].fig, b->c[j].n_fig,
                     b->alpha / looks, b->alpha, ends ? 0 : b->delta / 4,
                     ends ? log1p(DLB_BISECT_SAME) : b->delta / 2, out);
}

/* The commit between a and b to measure next: the one nearest the middle
 * that is neither measured nor unbuildable; b when there is none. */
static size_t midpoint(const struct dlb_bisect *b, size_t lo, size_t hi)
{
    size_t mid = lo + (hi - lo) / 2;
    for (size_t off = 0; off < hi - lo; off++) {
        size_t cand[2] = {mid - off, mid + off};
        for (int k = 0; k < 2; k++)
            if (cand[k] > lo && cand[k] < hi && !b->c[cand[k]].measured &&
                b->c[cand[k]].built != -1)
                return cand[k];
    }
    return hi;
}

static void push(size_t *which, size_t *n, size_t i)
{
    for (size_t k = 0; k < *n; k++)
        if (which[k] == i)
            return;
    which[(*n)++] = i;
}

enum dlb_bisect_step dlb_bisect_next(struct dlb_bisect *b, size_t *which,
                                     size_t *n_which)
{
    *n_which = 0;
    for (;;) {
        if (b->state != DLB_BISECT_ENDPOINTS && b->state != DLB_BISECT_SEARCHING)
            return DLB_BISECT_DONE;
        for (size_t i = 0; i < b->n; i++)
            if (b->c[i].measured && b->c[i].built == 0) {
                which[(*n_which)++] = i;
                return DLB_BISECT_BUILD;
            }
        if (b->c[0].built != 1 || b->c[b->n - 1].built != 1) {
            b->state = DLB_BISECT_UNDECIDED;
            return DLB_BISECT_DONE;
        }
        /* A commit short of runs_min runs, with its measured neighbours:
         * each comparison rests on runs made side by side. */
        for (size_t i = 0; i < b->n; i++) {
            if (!usable(&b->c[i]) || b->c[i].n_fig >= b->runs_min)
                continue;
            push(which, n_which, i);
            for (size_t k = i; k-- > 0;)
                if (usable(&b->c[k])) {
                    if (b->c[k].n_fig < b->runs_max)
                        push(which, n_which, k);
                    break;
                }
            for (size_t k = i + 1; k < b->n; k++)
                if (usable(&b->c[k])) {
                    if (b->c[k].n_fig < b->runs_max)
                        push(which, n_which, k);
                    break;
                }
        }
        if (*n_which)
            return DLB_BISECT_RUN;
        if (b->state == DLB_BISECT_ENDPOINTS) {
            struct dlb_pair_cmp cmp;
            compare(b, 0, b->n - 1, &cmp);
            if (cmp.verdict == DLB_PAIR_DIFFERENT && cmp.ratio > 1) {
                b->delta = log(cmp.ratio);
                b->state = DLB_BISECT_SEARCHING;
                continue;
            }
            if (cmp.verdict != DLB_PAIR_UNDECIDED) {
                b->state = DLB_BISECT_NOT_REPRODUCED;
                return DLB_BISECT_DONE;
            }
            if (b->c[0].n_fig >= b->runs_max && b->c[b->n - 1].n_fig >= b->runs_max) {
                b->state = DLB_BISECT_UNDECIDED;
                return DLB_BISECT_DONE;
            }
            if (b->c[0].n_fig < b->runs_max)
                push(which, n_which, 0);
            if (b->c[b->n - 1].n_fig < b->runs_max)
                push(which, n_which, b->n - 1);
            return DLB_BISECT_RUN;
        }
        int added = 0, gave_up = 0;
        for (size_t i = 0, prev = (size_t)-1; i < b->n; i++) {
            if (!usable(&b->c[i]))
                continue;
            if (prev != (size_t)-1) {
                struct dlb_pair_cmp cmp;
                compare(b, prev, i, &cmp);
                if (cmp.verdict == DLB_PAIR_UNDECIDED) {
                    /* More runs of whichever side may still have them. */
                    if (b->c[prev].n_fig < b->runs_max)
                        push(which, n_which, prev);
                    if (b->c[i].n_fig < b->runs_max)
                        push(which, n_which, i);
                    gave_up |= b->c[prev].n_fig >= b->runs_max &&
                               b->c[i].n_fig >= b->runs_max;
                } else if (cmp.verdict == DLB_PAIR_DIFFERENT) {
                    size_t m = midpoint(b, prev, i);
                    if (m != i) {
                        b->c[m].measured = 1;
                        added = 1;
                    }
                }
            }
            prev = i;
        }
        if (added) {
            *n_which = 0;
            continue;
        }
        if (*n_which)
            return DLB_BISECT_RUN;
        b->state = gave_up ? DLB_BISECT_UNDECIDED : DLB_BISECT_FOUND;
        return DLB_BISECT_DONE;
    }
}

size_t dlb_bisect_pairs(const struct dlb_bisect *b, struct dlb_bisect_pair *out,
                        long *culprit)
{
    size_t n = 0, prev = (size_t)-1;
    *culprit = -1;
    for (size_t i = 0; i < b->n; i++) {
        if (!usable(&b->c[i]))
            continue;
        if (prev != (size_t)-1) {
            out[n] = (struct dlb_bisect_pair){prev, i, {NAN, NAN, NAN, NAN, 0}};
            compare(b, prev, i, &out[n].cmp);
            /* Slower than its parent, with no commit between them left
             * to measure (adjacent, or the rest failed to build). */
            if (*culprit < 0 && isfinite(b->delta) &&
                out[n].cmp.verdict == DLB_PAIR_DIFFERENT && out[n].cmp.ratio > 1 &&
                midpoint(b, prev, i) == i)
                *culprit = (long)i;
            n++;
        }
        prev = i;
    }
    return n;
}
