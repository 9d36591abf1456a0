/* The scaling table after "vs baseline": how much of N workers' ideal
 * throughput a data-parallel configuration reached. */
#include "select/vs_baseline.h"

#include <math.h>
#include <string.h>

void dlb_vs_scaling_print(FILE *f, const struct dlb_record *recs, size_t n,
                          size_t w)
{
    size_t i;
    int any = 0;
    for (i = 0; i < n; i++)
        any |= !isnan(recs[i].vs_baseline.scaling_efficiency);
    if (!any)
        return;
    fprintf(f, "\nscaling (throughput / (workers x the baseline's throughput "
               "per worker))\n");
    fprintf(f, "%-*s  %7s  %10s  %9s\n", (int)w, "config", "workers", "efficiency",
            "hidden");
    fprintf(f, "%-*s  %7s  %10s  %9s\n", (int)w, "", "", "%", "%");
    for (i = 0; i < n; i++) {
        const struct dlb_rec_vs_baseline *o = &recs[i].vs_baseline;
        if (isnan(o->scaling_efficiency))
            continue;
        /* The share of the all-reduce hidden behind backward, where a
         * plugin measured it. */
        char hidden[32] = "-";
        for (size_t k = 0; k < recs[i].n_metrics; k++) {
            const struct dlb_rec_metric *m = &recs[i].metrics[k];
            size_t len = strlen(m->name);
            if (len >= 13 && !strcmp(m->name + len - 13, ".hidden_share"))
                snprintf(hidden, sizeof hidden, "%.0f",
                         isnan(m->value) ? 0 : m->value);
        }
        fprintf(f, "%-*s  %7.0f  %10.1f  %9s\n", (int)w, recs[i].id,
                isnan(o->workers) ? 0 : o->workers, 100.0 * o->scaling_efficiency,
                hidden);
    }
}
