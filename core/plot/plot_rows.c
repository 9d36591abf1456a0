/* Which configurations the one-row-per-configuration plots draw. Beyond
 * DLB_PLOT_MAX_ROWS a plot is neither readable at a glance nor cheap: 200
 * rows made a 4000-pixel PNG per plot and a 6 MB step-time SVG inlined in
 * report.html, and gnuplot's time at the end of a 200-configuration
 * sweep was 1.2% of the sweep's own. Those plots then draw the fastest
 * configurations, always with the winner and the baseline; every row
 * stays in the report's table and in results.csv. */
#include "plot/plot_impl.h"
#include "util/words.h"

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

void dlb_plot_shared_words_of(const char *const *ids, size_t n_ids, char *out,
                              size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    if (n_ids < 2)
        return;
    for (const char *w = ids[0]; *w;) {
        size_t len = strcspn(w, " ");
        int all = len > 0;
        for (size_t i = 1; all && i < n_ids; i++)
            all = dlb_words_has(ids[i], w, len);
        if (all && used + len + 2 < n)
            used += (size_t)snprintf(out + used, n - used, "%s%.*s",
                                     used ? " " : "", (int)len, w);
        w += len;
        w += strspn(w, " ");
    }
}

void dlb_plot_shared_words(struct dlb_plot_recs recs, char *out, size_t n)
{
    const char **ids = malloc((recs.n + 1) * sizeof *ids);
    size_t ok = 0;
    out[0] = '\0';
    if (!ids)
        return; /* the labels keep every word */
    for (size_t i = 0; i < recs.n; i++)
        if (recs.v[i]->status == DLB_REC_OK)
            ids[ok++] = recs.v[i]->id;
    dlb_plot_shared_words_of(ids, ok, out, n);
    free(ids);
}

void dlb_plot_row_label(const char *id, const char *shared, const char *tail,
                        char *out, size_t n)
{
    char name[1024];
    dlb_words_not_in(name, sizeof name, id, shared);
    size_t room = DLB_PLOT_LABEL_MAX > strlen(tail) + 3
                      ? DLB_PLOT_LABEL_MAX - strlen(tail) - 3 : 8;
    /* cut at a character boundary, and say so */
    size_t keep = strlen(name);
    if (keep > room) {
        keep = room;
        while (keep && ((unsigned char)name[keep] & 0xc0) == 0x80)
            keep--;
        snprintf(out, n, "%.*s...%s", (int)keep, name, tail);
    } else {
        snprintf(out, n, "%s%s", name, tail);
    }
}
