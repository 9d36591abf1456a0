/* Ranking weights and units by magnitude. Exact counts matter: the
 * results report the nominal sparsity beside the zeros counted on the
 * model, and the two must agree, so ties are broken by position instead
 * of a threshold that would take every tied weight. */
#include "prune_rank.h"

#include <math.h>
#include <stdlib.h>

size_t dlb_prune_count(double fraction, size_t n, int keep_one)
{
    if (!(fraction > 0) || n == 0)
        return 0;
    size_t k = (size_t)llround(fraction * (double)n);
    if (k > n)
        k = n;
    if (keep_one && k >= n)
        k = n - 1;
    return k;
}

struct item {
    double key;
    uint32_t t;
    size_t i;
};

static int by_key(const void *pa, const void *pb)
{
    const struct item *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

size_t dlb_prune_magnitude(const float *const *w, const size_t *n,
                           unsigned n_t, double sparsity, uint8_t *const *mask)
{
    size_t total = 0, j = 0;
    for (unsigned t = 0; t < n_t; t++)
        total += n[t];
    size_t k = dlb_prune_count(sparsity, total, 0);
    struct item *it = malloc((total ? total : 1) * sizeof *it);
    if (!it)
        return (size_t)-1;
    for (unsigned t = 0; t < n_t; t++)
        for (size_t i = 0; i < n[t]; i++) {
            it[j++] = (struct item){fabs((double)w[t][i]), t, i};
            mask[t][i] = 1;
        }
    qsort(it, total, sizeof *it, by_key);
    for (size_t q = 0; q < k; q++)
        mask[it[q].t][it[q].i] = 0;
    free(it);
    return k;
}

static int by_index(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return a < b ? -1 : a > b;
}

uint32_t dlb_prune_rank_group(const float *const *w, const size_t *per_unit,
                              unsigned n_members, uint32_t units,
                              enum dlb_prune_norm norm, double fraction,
                              uint32_t *keep)
{
    struct item *it = malloc((units ? units : 1) * sizeof *it);
    if (!it || units == 0 || n_members == 0) {
        free(it);
        return 0;
    }
    for (uint32_t u = 0; u < units; u++) {
        double s = 0.0;
        for (unsigned g = 0; g < n_members; g++) {
            const float *row = w[g] + (size_t)u * per_unit[g];
            for (size_t k = 0; k < per_unit[g]; k++)
                s += norm == DLB_PRUNE_NORM_L1 ? fabs((double)row[k])
                                               : (double)row[k] * row[k];
        }
        /* The square root does not change the order of L2 norms. */
        it[u] = (struct item){s, 0, u};
    }
    qsort(it, units, sizeof *it, by_key);
    size_t drop = dlb_prune_count(fraction, units, 1);
    uint32_t n_keep = units - (uint32_t)drop;
    for (uint32_t u = 0; u < n_keep; u++)
        keep[u] = (uint32_t)it[drop + u].i;
    qsort(keep, n_keep, sizeof *keep, by_index);
    free(it);
    return n_keep;
}

uint32_t dlb_prune_rank_units(const float *w, uint32_t units, size_t per_unit,
                              enum dlb_prune_norm norm, double fraction,
                              uint32_t *keep)
{
    return dlb_prune_rank_group(&w, &per_unit, 1, units, norm, fraction,
                                keep);
}
