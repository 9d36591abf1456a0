/* The scaling table after "vs baseline": how much of N workers' ideal
 * throughput a data-parallel configuration reached. */
#include "vs_baseline.h"

#include <string.h>

void dlb_vs_scaling_print(FILE *f, json_t *records, size_t w)
{
    size_t i;
    json_t *rec;
    int any = 0;
    json_array_foreach(records, i, rec)
        any |= json_object_get(json_object_get(rec, "vs_baseline"),
                               "scaling_efficiency") != NULL;
    if (!any)
        return;
    fprintf(f, "\nscaling (throughput / (workers x the baseline's throughput "
               "per worker))\n");
    fprintf(f, "%-*s  %7s  %10s  %9s\n", (int)w, "config", "workers", "efficiency",
            "hidden");
    fprintf(f, "%-*s  %7s  %10s  %9s\n", (int)w, "", "", "%", "%");
    json_array_foreach(records, i, rec) {
        json_t *o = json_object_get(rec, "vs_baseline");
        json_t *e = json_object_get(o, "scaling_efficiency");
        if (!json_is_number(e))
            continue;
        /* The share of the all-reduce hidden behind backward, where a
         * plugin measured it. */
        char hidden[32] = "-";
        const char *k;
        json_t *m;
        json_object_foreach(json_object_get(rec, "metrics"), k, m) {
            size_t n = strlen(k);
            if (n >= 13 && !strcmp(k + n - 13, ".hidden_share"))
                snprintf(hidden, sizeof hidden, "%.0f",
                         json_number_value(json_object_get(m, "value")));
        }
        fprintf(f, "%-*s  %7.0f  %10.1f  %9s\n", (int)w,
                json_string_value(json_object_get(rec, "id")),
                json_number_value(json_object_get(o, "workers")),
                100.0 * json_number_value(e), hidden);
    }
}
