/* `dlbench compare`'s accuracy rows (compare.h): a build that gets
 * faster by computing something else shows here. */
#include "compare/compare.h"

#include <math.h>
#include <string.h>

#include "results/accuracy_pair.h"
#include "results/comparison.h"

void dlb_compare_accuracy(struct dlb_comparison *cmp, const struct dlb_record *b,
                          const struct dlb_record *n, struct dlb_cmp_row *row)
{
    struct dlb_paired_diff d;
    int common = 0;
    size_t pairs = dlb_accuracy_pair(n->json, b->json, &d, &common);
    if (!pairs || isnan(d.mean))
        return;
    dlb_record_metric_value(b, "accuracy", &row->base_accuracy);
    dlb_record_metric_value(n, "accuracy", &row->new_accuracy);
    row->accuracy_change = d.mean;
    row->accuracy_ci = d.half;
    row->accuracy_seeds = common ? (long long)pairs : 0;
    row->accuracy_images_paired = d.images_paired;
    /* the same prediction on every image at every seed: nothing moved */
    int alike = d.images_paired && d.binom_half == 0 && d.mean == 0 &&
                !(d.t_half > 0);
    int sign = dlb_paired_diff_sign(&d);
    if (alike)
        row->accuracy_verdict = "same";
    else if (!common || pairs < 2)
        row->accuracy_verdict = "not judged";
    else if (sign < 0 && d.mean < -cmp->accuracy_threshold)
        row->accuracy_verdict = "lower";
    else if (sign > 0 && d.mean > cmp->accuracy_threshold)
        row->accuracy_verdict = "higher";
    else
        row->accuracy_verdict = "same";
    cmp->accuracy_judged += strcmp(row->accuracy_verdict, "not judged") != 0;
    cmp->accuracy_lower += !strcmp(row->accuracy_verdict, "lower");
    cmp->accuracy_higher += !strcmp(row->accuracy_verdict, "higher");
}
