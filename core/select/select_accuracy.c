/* The accuracy change of a configuration against its workload's baseline,
 * as the verdicts, the winner lines and the accuracy constraint judge it.
 * Trained from the same seeds (accuracy_seeds), it is the mean of the
 * paired differences with a 95% t interval over the seeds, combined with
 * the test set's sampling error, image by image where both records say
 * which images each seed got right (results/accuracy_pair.h): the
 * interval holds the training's own noise. With one seed that noise is
 * not measured: the change is called a gain or a loss only beyond the
 * suite's stated accuracy_noise, and with none stated, never. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "results/accuracy_pair.h"
#include "select/select_impl.h"

void dlb_sel_accuracy_change(const struct dlb_select_settings *set,
                             const struct dlb_sel_item *it,
                             const struct dlb_sel_item *base,
                             struct dlb_sel_acc *out)
{
    *out = (struct dlb_sel_acc){0, 0, NAN, NAN, 0, 0, 0};
    if (!base || isnan(it->accuracy) || isnan(base->accuracy) ||
        !dlb_sel_same_training(it, base))
        return;
    struct dlb_paired_diff d;
    size_t n = dlb_accuracy_pair(it->rec, base->rec, &d, NULL);
    if (!n)
        return;
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
