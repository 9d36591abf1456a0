/* Accuracy changes paired by seed and by test image (accuracy_pair.h). */
#include "results/accuracy_pair.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/hexbits.h"

#define MAX_SEEDS 100 /* accuracy_seeds' limit */

static double metric(json_t *rec, const char *name)
{
    json_t *v = json_object_get(json_object_get(json_object_get(rec, "metrics"),
                                                name), "value");
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The seeds of a record into seed[], acc[] and marks[] (which test images
 * it got right, as written; NULL where not kept), at most cap: its
 * "seeds", else its one accuracy from the configuration's seed. */
static size_t seeds_of(json_t *rec, long long *seed, double *acc,
                       const char **marks, size_t cap)
{
    json_t *a = json_object_get(rec, "seeds"), *v;
    size_t i, n = 0;
    json_array_foreach(a, i, v) {
        json_t *x = json_object_get(v, "accuracy");
        if (json_is_number(x) && n < cap) {
            seed[n] = (long long)json_integer_value(json_object_get(v, "seed"));
            marks[n] = json_string_value(json_object_get(v, "test_correct"));
            acc[n++] = json_number_value(x);
        }
    }
    double one = metric(rec, "accuracy");
    if (!json_is_array(a) && !isnan(one) && cap) {
        json_t *s = json_object_get(json_object_get(rec, "config"), "seed");
        seed[0] = json_is_integer(s) ? (long long)json_integer_value(s) : 0;
        marks[0] = json_string_value(json_object_get(rec, "test_correct"));
        acc[0] = one;
        n = 1;
    }
    return n;
}

/* The paired test-set half-width of n seed pairs scored on `images`
 * images, from their marks; NAN when they do not read as that many
 * images (then the binomial stands). */
static double images_half(const char *const *mi, const char *const *mb,
                          size_t n, double images)
{
    if (!(images >= 2) || images > 1e9)
        return NAN;
    size_t N = (size_t)images, nb = dlb_hexbits_bytes(N);
    /* the texts' lengths first: a damaged count allocates nothing */
    for (size_t k = 0; k < n; k++)
        if (strlen(mi[k]) != 2 * nb || strlen(mb[k]) != 2 * nb)
            return NAN;
    uint8_t *buf = malloc(2 * n * nb + 1);
    const uint8_t *pi[MAX_SEEDS], *pb[MAX_SEEDS];
    int ok = buf != NULL;
    for (size_t k = 0; ok && k < n; k++) {
        uint8_t *a = buf + 2 * k * nb, *b = a + nb;
        ok = dlb_hexbits_decode(mi[k], N, a) == 0 &&
             dlb_hexbits_decode(mb[k], N, b) == 0;
        pi[k] = a;
        pb[k] = b;
    }
    double h = ok ? dlb_paired_images_half(pi, pb, n, N) : NAN;
    free(buf);
    return h;
}

size_t dlb_accuracy_pair(json_t *it, json_t *base, struct dlb_paired_diff *out,
                         int *common)
{
    long long si[MAX_SEEDS], sb[MAX_SEEDS];
    double ai[MAX_SEEDS], ab[MAX_SEEDS], pi[MAX_SEEDS], pb[MAX_SEEDS];
    const char *mi[MAX_SEEDS], *mb[MAX_SEEDS], *qi[MAX_SEEDS], *qb[MAX_SEEDS];
    size_t ni = seeds_of(it, si, ai, mi, MAX_SEEDS);
    size_t nb = seeds_of(base, sb, ab, mb, MAX_SEEDS);
    size_t n = 0;
    int marked = 1; /* every pair has both marks */
    dlb_paired_diff(NULL, NULL, 0, NAN, out);
    if (common)
        *common = 0;
    for (size_t i = 0; i < ni; i++)
        for (size_t j = 0; j < nb; j++)
            if (si[i] == sb[j]) {
                pi[n] = ai[i];
                pb[n] = ab[j];
                qi[n] = mi[i];
                qb[n] = mb[j];
                marked &= qi[n] && qb[n];
                n++;
                break;
            }
    if (common)
        *common = n > 0;
    if (!n) { /* no seed in common: the two means, as one unpaired pair */
        pi[0] = metric(it, "accuracy");
        pb[0] = metric(base, "accuracy");
        n = 1;
        marked = 0;
        if (isnan(pi[0]) || isnan(pb[0]))
            return 0;
    }
    double ti = metric(it, "test_images"), tb = metric(base, "test_images");
    dlb_paired_diff(pi, pb, n, isnan(ti) || isnan(tb) ? NAN : fmin(ti, tb), out);
    /* scored on the same images, marked: the paired test-set error */
    double h = marked && ti == tb ? images_half(qi, qb, n, ti) : NAN;
    if (!isnan(h))
        dlb_paired_diff_use_images(out, h);
    return n;
}
