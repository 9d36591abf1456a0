/* The accuracy change of a configuration against its workload's baseline,
 * as the verdicts, the winner lines and the accuracy constraint judge it.
 * Trained from the same seeds (accuracy_seeds), it is the mean of the
 * paired differences with a 95% t interval over the seeds, combined with
 * the test set's binomial interval (stats_paired.h): the interval holds
 * the training's own noise. With one seed that noise is not measured: the
 * change is called a gain or a loss only beyond the suite's stated
 * accuracy_noise, and with none stated, never. */
#include <math.h>
#include <stdlib.h>

#include "select/select_impl.h"
#include "stats/stats_paired.h"

/* The seeds of a record: "seeds" (seeds.h), else its one accuracy from the
 * configuration's seed. Returns how many, into seed[] and acc[] (at most
 * cap). */
static size_t seeds_of(const struct dlb_sel_item *it, long long *seed, double *acc,
                       size_t cap)
{
    json_t *a = json_object_get(it->rec, "seeds"), *v;
    size_t i, n = 0;
    json_array_foreach(a, i, v) {
        json_t *x = json_object_get(v, "accuracy");
        if (json_is_number(x) && n < cap) {
            seed[n] = (long long)json_integer_value(json_object_get(v, "seed"));
            acc[n++] = json_number_value(x);
        }
    }
    if (!json_is_array(a) && !isnan(it->accuracy) && cap) {
        json_t *s = json_object_get(json_object_get(it->rec, "config"), "seed");
        seed[0] = json_is_integer(s) ? (long long)json_integer_value(s) : 0;
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

void dlb_sel_accuracy_change(const struct dlb_select_settings *set,
                             const struct dlb_sel_item *it,
                             const struct dlb_sel_item *base,
                             struct dlb_sel_acc *out)
{
    long long si[MAX_SEEDS], sb[MAX_SEEDS];
    double ai[MAX_SEEDS], ab[MAX_SEEDS], pi[MAX_SEEDS], pb[MAX_SEEDS];
    *out = (struct dlb_sel_acc){0, 0, NAN, NAN, 0, 0, 0};
    if (!base || isnan(it->accuracy) || isnan(base->accuracy) ||
        !dlb_sel_same_training(it, base))
        return;
    size_t ni = seeds_of(it, si, ai, MAX_SEEDS), nb = seeds_of(base, sb, ab, MAX_SEEDS);
    size_t n = 0;
    for (size_t i = 0; i < ni; i++)
        for (size_t j = 0; j < nb; j++)
            if (si[i] == sb[j]) {
                pi[n] = ai[i];
                pb[n++] = ab[j];
                break;
            }
    if (!n) { /* no seed in common: the two means, as one unpaired pair */
        pi[0] = it->accuracy;
        pb[0] = base->accuracy;
        n = 1;
    }
    double ti = test_images(it), tb = test_images(base);
    struct dlb_paired_diff d;
    dlb_paired_diff(pi, pb, n, isnan(ti) || isnan(tb) ? NAN : fmin(ti, tb), &d);
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
