#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "measure.h"

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
    const char *status = json_string_value(json_object_get(rec, "status"));
    double med = json_real_value(json_object_get(json_object_get(rec, "stats"), "median"));
    double thr = json_real_value(json_object_get(json_object_get(rec, "throughput"), "median"));
    double wall = json_real_value(json_object_get(rec, "wall_s"));
    if (p->tty)
        fprintf(stderr, "\r\033[K");
    if (status && !strcmp(status, "ok"))
        fprintf(stderr, "[%zu/%zu] %s: ok, %.4g ms/step, %.4g samples/s (%.1f s)\n", k,
                p->total, id, med * 1e3, thr, wall);
    else
        fprintf(stderr, "[%zu/%zu] %s: %s: %s\n", k, p->total, id, status ? status : "?",
                json_string_value(json_object_get(rec, "reason")));
}
