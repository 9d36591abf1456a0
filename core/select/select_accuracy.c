/* The accuracy change of a configuration against its workload's baseline,
 * as the verdicts, the winner lines and the accuracy constraint judge it.
 * Trained from the same seeds (accuracy_seeds), it is the mean of the
 * paired differences with a 95% t interval over the seeds, combined with
 * the test set's sampling error, image by image where both records say
 * which images each seed got right (test_correct), else binomial
 * (stats_paired.h): the interval holds the training's own noise. With one seed that noise is not measured: the
 * change is called a gain or a loss only beyond the suite's stated
 * accuracy_noise, and with none stated, never. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "select/select_impl.h"
#include "stats/stats_paired.h"
#include "util/hexbits.h"

/* The seeds of a record: "seeds" (seeds.h), else its one accuracy from the
 * configuration's seed. Returns how many, into seed[], acc[] and marks[]
 * (which test images it got right, as written; NULL where not kept), at
 * most cap. */
static size_t seeds_of(const struct dlb_sel_item *it, long long *seed, double *acc,
                       const char **marks, size_t cap)
{
    json_t *a = json_object_get(it->rec, "seeds"), *v;
    size_t i, n = 0;
    json_array_foreach(a, i, v) {
        json_t *x = json_object_get(v, "accuracy");
        if (json_is_number(x) && n < cap) {
            seed[n] = (long long)json_integer_value(json_object_get(v, "seed"));
            marks[n] = json_string_value(json_object_get(v, "test_correct"));
            acc[n++] = json_number_value(x);
        }
    }
    if (!json_is_array(a) && !isnan(it->accuracy) && cap) {
        json_t *s = json_object_get(json_object_get(it->rec, "config"), "seed");
        seed[0] = json_is_integer(s) ? (long long)json_integer_value(s) : 0;
        marks[0] = json_string_value(json_object_get(it->rec, "test_correct"));
        acc[0] = it->accuracy;
        n = 1;
    }
    return n;
}

static double test_images(const struct dlb_sel_item *it)
{
    double v;
    return dlb_record_metric_value(&it->r, "test_images", &v) ? v : NAN;
}

#define MAX_SEEDS 100 /* accuracy_seeds' limit */

/* The paired test-set half-width of n seed pairs scored on `images`
 * images, from their marks; NAN when a pair lacks them or they do not
 * read as that many images (then the binomial stands). */
static double images_half(const char *const *mi, const char *const *mb,
                          size_t n, double images)
{
    if (!(images >= 2) || images > 1e9)
        return NAN;
    size_t N = (size_t)images, nb = dlb_hexbits_bytes(N);
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

void dlb_sel_accuracy_change(const struct dlb_select_settings *set,
                             const struct dlb_sel_item *it,
                             const struct dlb_sel_item *base,
                             struct dlb_sel_acc *out)
{
    long long si[MAX_SEEDS], sb[MAX_SEEDS];
    double ai[MAX_SEEDS], ab[MAX_SEEDS], pi[MAX_SEEDS], pb[MAX_SEEDS];
    const char *mi[MAX_SEEDS], *mb[MAX_SEEDS], *qi[MAX_SEEDS], *qb[MAX_SEEDS];
    *out = (struct dlb_sel_acc){0, 0, NAN, NAN, 0, 0, 0};
    if (!base || isnan(it->accuracy) || isnan(base->accuracy) ||
        !dlb_sel_same_training(it, base))
        return;
    size_t ni = seeds_of(it, si, ai, mi, MAX_SEEDS);
    size_t nb = seeds_of(base, sb, ab, mb, MAX_SEEDS);
    size_t n = 0;
    int marked = 1; /* every pair has both marks */
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
    if (!n) { /* no seed in common: the two means, as one unpaired pair */
        pi[0] = it->accuracy;
        pb[0] = base->accuracy;
        n = 1;
        marked = 0;
    }
    double ti = test_images(it), tb = test_images(base);
    struct dlb_paired_diff d;
    dlb_paired_diff(pi, pb, n, isnan(ti) || isnan(tb) ? NAN : fmin(ti, tb), &d);
    /* scored on the same images, marked: the paired test-set error */
    double h = marked && ti == tb ? images_half(qi, qb, n, ti) : NAN;
    if (!isnan(h))
        dlb_paired_diff_use_images(&d, h);
    out->known = 1;
    out->seeds = n;
    out->change = d.mean;
    out->half = d.half;
    out->noise = n >= 2;
    if (n == 1 && set->accuracy_noise > 0) {
        /* the suite's stated noise of one paired difference, known: z */
        double noise = 1.96 * set->accuracy_noise;
        out->half = isnan(d.binom_half) ? noise : hypot(noise, d.binom_half);
        out->noise = 1;
        d.half = out->half;
    }
    double tol = set->max_accuracy_drop;
    if (out->noise && !isnan(out->half)) {
        out->sign = dlb_paired_diff_sign(&d);
        out->within = out->change - out->half >= -tol ? 1
                      : out->change + out->half < -tol ? -1 : 0;
    } else {
        /* one seed, its noise unknown: the point figure decides the
         * constraint, as the best there is, and says it is unchecked */
        out->within = -out->change <= tol ? 1 : -1;
    }
}

const char *dlb_sel_accuracy_effect(const struct dlb_sel_acc *a)
{
    if (!a->known)
        return NULL;
    if (!a->noise)
        return "training noise not measured";
    return a->sign > 0 ? "gain" : a->sign < 0 ? "loss" : "no measurable effect";
}

/* The accuracy drop against the baseline with what backs it:
 * accuracy_drop (points, mean over paired seeds), accuracy_drop_ci (95%
 * half-width), accuracy_seeds, accuracy_effect and accuracy_within
 * ("yes", "no", "cannot tell", or "unchecked" when one seed left the
 * training noise unmeasured). */
void dlb_sel_accuracy_fill(struct dlb_sel_config *o, struct dlb_strpool *pool,
                           const struct dlb_select_settings *set,
                           const struct dlb_sel_item *it,
                           const struct dlb_sel_item *base)
{
    if (!base || isnan(base->accuracy) || isnan(it->accuracy))
        return;
    if (it == base) {
        o->accuracy_drop = 0;
        return;
    }
    if (dlb_sel_same_training(it, base)) {
        struct dlb_sel_acc a;
        dlb_sel_accuracy_change(set, it, base, &a);
        o->accuracy_drop = dlb_sel_fig(-a.change);
        o->accuracy_drop_ci = dlb_sel_fig(a.half);
        o->accuracy_seeds = (double)a.seeds;
        o->accuracy_effect = dlb_sel_accuracy_effect(&a);
        o->accuracy_within = !a.noise ? "unchecked" : a.within > 0 ? "yes"
                             : a.within < 0 ? "no" : "cannot tell";
        return;
    }
    char note[200];
    snprintf(note, sizeof note, "not compared: trained on %.0f images, its "
             "baseline on %.0f (set train_samples to give every batch size "
             "the same budget)", it->trained, base->trained);
    o->accuracy_note = dlb_strpool_add(pool, note);
}
