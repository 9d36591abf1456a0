#include "run/progress.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "stats/measure.h"
#include "results/record.h"
#include "util/figure.h"

void dlb_progress_init(struct dlb_progress *p, size_t total)
{
    p->total = total;
    p->done = 0;
    p->start = dlb_now();
    p->tty = isatty(STDERR_FILENO);
}

static void fmt_clock(char *buf, size_t len, double s)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

void dlb_progress_start(struct dlb_progress *p, size_t k, const char *id)
{
    if (!p->tty)
        return;
    double el = dlb_now() - p->start;
    char e[32], l[32] = "?";
    fmt_clock(e, sizeof e, el);
    /* Estimate from the configurations finished so far. */
    if (p->done > 0)
        fmt_clock(l, sizeof l, el / (double)p->done * (double)(p->total - p->done));
    int width = 20, fill = (int)(width * p->done / (p->total ? p->total : 1));
    fprintf(stderr, "\r\033[K[%.*s%*s] %zu/%zu  %s elapsed, ~%s left  %s", fill,
            "####################", width - fill, "", k, p->total, e, l, id);
    fflush(stderr);
}

void dlb_progress_done(struct dlb_progress *p, size_t k, const char *id, json_t *rec)
{
    p->done++;
    struct dlb_record r;
    /* a record that is not one (it never is: results.h checks them)
     * shows as "?" */
    int typed = dlb_record_read(rec, NULL, &r, NULL) == DLB_OK;
    const char *status = typed ? dlb_rec_status_name(r.status) : NULL;
    double med = typed && !isnan(r.stats.median) ? r.stats.median : 0;
    double thr = typed && !isnan(r.throughput.median) ? r.throughput.median : 0;
    double wall = typed && !isnan(r.wall_s) ? r.wall_s : 0;
    if (p->tty)
        fprintf(stderr, "\r\033[K");
    double acc = NAN;
    int seed_run = typed && json_is_integer(json_object_get(rec, "seed_rep"));
    if (typed)
        dlb_record_metric_value(&r, "accuracy", &acc);
    if (status && !strcmp(status, "ok") && seed_run)
        /* accuracy_seeds: a training from another seed, not measured */
        fprintf(stderr, "[%zu/%zu] %s: ok, seed +%lld: accuracy %.2f%% (%.1f s)\n",
                k, p->total, id,
                (long long)json_integer_value(json_object_get(rec, "seed_rep")),
                acc, wall);
    else if (status && !strcmp(status, "ok")) {
        /* the table's figures: 21882 samples/s, not 2.188e+04 */
        char ms[32], sps[32];
        dlb_figure_text(ms, sizeof ms, med * 1e3);
        dlb_figure_text(sps, sizeof sps, thr);
        fprintf(stderr, "[%zu/%zu] %s: ok, %s ms/step, %s samples/s (%.1f s)\n", k,
                p->total, id, ms, sps, wall);
    }
    else
        fprintf(stderr, "[%zu/%zu] %s: %s: %s\n", k, p->total, id, status ? status : "?",
                typed && r.reason ? r.reason : "(null)");
    if (typed)
        dlb_record_free(&r);
}
