/* Which configurations the one-row-per-configuration plots draw. Beyond
 * DLB_PLOT_MAX_ROWS a plot is neither readable at a glance nor cheap: 200
 * rows made a 4000-pixel PNG per plot and a 6 MB step-time SVG inlined in
 * report.html, and gnuplot's time at the end of a 200-configuration
 * sweep was 1.2% of the sweep's own. Those plots then draw the fastest
 * configurations, always with the winner and the baseline; every row
 * stays in the report's table and in results.csv. */
#include "plot/plot_impl.h"

#include <math.h>
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

static int is_id(const struct dlb_record *rec, const char *id)
{
    return id && !strcmp(rec->id, id);
}

struct dlb_plot_recs dlb_plot_rows(struct dlb_plot_recs all, const struct dlb_selection *selection,
                                   size_t max, char *note, size_t note_len)
{
    size_t n = all.n, shown = 0, i;
    note[0] = '\0';
    if (n <= max)
        return all;
    const char *winner = selection->winner, *base = selection->baseline;
    struct ranked *r = malloc(n * sizeof *r);
    unsigned char *keep = calloc(n, 1);
    struct dlb_plot_recs out = {malloc(n * sizeof *out.v), 0};
    if (!r || !keep || !out.v) {
        free(r);
        free(keep);
        free(out.v);
        return (struct dlb_plot_recs){NULL, 0};
    }
    for (i = 0; i < n; i++) {
        const struct dlb_record *rec = all.v[i];
        double t = rec->throughput.median;
        r[i] = (struct ranked){i, rec->status == DLB_REC_OK && !isnan(t) ? t : -1.0};
        int listed = 0;
        for (size_t j = 0; j < selection->winners.n; j++)
            listed |= is_id(rec, selection->winners.id[j]);
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
            out.v[out.n++] = all.v[i];
    snprintf(note, note_len, "the %zu fastest of %zu configurations, with the "
             "winner and the baseline", shown, n);
    free(r);
    free(keep);
    return out;
}
