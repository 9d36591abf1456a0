/* Which configurations the one-row-per-configuration plots draw. Beyond
 * DLB_PLOT_MAX_ROWS a plot is neither readable at a glance nor cheap: 200
 * rows made a 4000-pixel PNG per plot and a 6 MB step-time SVG inlined in
 * report.html, and gnuplot's time at the end of a 200-configuration
 * sweep was 1.2% of the sweep's own. Those plots then draw the fastest
 * configurations, always with the winner and the baseline; every row
 * stays in the report's table and in results.csv. */
#include "plot_impl.h"

#include <stdlib.h>
#include <string.h>

struct ranked {
    size_t index;
    double tput; /* median samples/s; -1 when the record has none */
};

static int by_tput_desc(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->tput != y->tput)
        return x->tput < y->tput ? 1 : -1;
    return x->index < y->index ? -1 : x->index > y->index; /* stable */
}

static int is_id(json_t *rec, const char *id)
{
    return id && !strcmp(dlb_rec_id(rec), id);
}

json_t *dlb_plot_rows(json_t *records, json_t *selection, size_t max,
                      char *note, size_t note_len)
{
    size_t n = json_array_size(records), shown = 0, i;
    note[0] = '\0';
    if (n <= max)
        return json_incref(records);
    const char *winner = json_string_value(json_object_get(selection, "winner"));
    const char *base = json_string_value(json_object_get(selection, "baseline"));
    struct ranked *r = malloc(n * sizeof *r);
    unsigned char *keep = calloc(n, 1);
    json_t *out = json_array();
    if (!r || !keep || !out) {
        free(r);
        free(keep);
        json_decref(out);
        return NULL;
    }
    for (i = 0; i < n; i++) {
        json_t *rec = json_array_get(records, i);
        int have = 0;
        double t = dlb_rec_num(rec, "throughput", "median", &have);
        r[i] = (struct ranked){i, dlb_rec_ok(rec) && have ? t : -1.0};
        int listed = 0;
        size_t j;
        json_t *w;
        json_array_foreach(json_object_get(selection, "winners"), j, w)
            listed |= is_id(rec, json_string_value(w));
        if (is_id(rec, winner) || is_id(rec, base) || listed) {
            keep[i] = 1;
            shown++;
        }
    }
    qsort(r, n, sizeof *r, by_tput_desc);
    for (i = 0; i < n && shown < max; i++)
        if (!keep[r[i].index]) {
            keep[r[i].index] = 1;
            shown++;
        }
    /* In the run's order, as the table lists them. */
    for (i = 0; i < n; i++)
        if (keep[i])
            json_array_append(out, json_array_get(records, i));
    snprintf(note, note_len, "the %zu fastest of %zu configurations, with the "
             "winner and the baseline", shown, n);
    free(r);
    free(keep);
    return out;
}
