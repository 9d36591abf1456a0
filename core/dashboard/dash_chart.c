/* One configuration's chart: inline SVG, one line per machine with each
 * night's median step time and its 95% interval, each segment's median
 * between change points, and the change points as red dashed lines
 * labelled with their commit range and size. */
#include "dashboard/dash_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define W 560
#define H 230
#define LEFT 58
#define RIGHT 12
#define TOP 36
#define BOTTOM 26
#define CP_RED "#d62728"

struct frame {
    double t0, t1, y0, y1;      /* time (s) and step time (in `unit`) shown */
    double scale;               /* seconds to `unit` */
    const char *unit;
};

static double px(const struct frame *fr, double t)
{
    return LEFT + (t - fr->t0) / (fr->t1 - fr->t0) * (W - LEFT - RIGHT);
}

static double py(const struct frame *fr, double ms)
{
    return H - BOTTOM - (ms - fr->y0) / (fr->y1 - fr->y0) * (H - TOP - BOTTOM);
}

static void widen(double *lo, double *hi, double v)
{
    if (isfinite(v) && v < *lo)
        *lo = v;
    if (isfinite(v) && v > *hi)
        *hi = v;
}

static struct frame frame_of(const struct dlb_dash_chart *c)
{
    struct frame fr = {INFINITY, -INFINITY, INFINITY, -INFINITY, 1e3, "ms"};
    for (size_t s = 0; s < c->n; s++)
        for (size_t i = 0; i < c->series[s]->n; i++) {
            const struct dlb_point *p = &c->series[s]->pts[i];
            widen(&fr.t0, &fr.t1, dlb_dash_time(p->start_utc));
            widen(&fr.y0, &fr.y1, p->median_s);
            widen(&fr.y0, &fr.y1, p->ci_lo_s);
            widen(&fr.y0, &fr.y1, p->ci_hi_s);
        }
    /* The unit that puts the figures between 1 and 1000. */
    fr.scale = 1e3;
    fr.unit = "ms";
    if (isfinite(fr.y1) && fr.y1 < 1e-3) {
        fr.scale = 1e6;
        fr.unit = "us";
    } else if (isfinite(fr.y1) && fr.y1 >= 1) {
        fr.scale = 1;
        fr.unit = "s";
    }
    fr.y0 *= fr.scale;
    fr.y1 *= fr.scale;
    if (!(fr.t1 > fr.t0)) {
        fr.t0 = isfinite(fr.t0) ? fr.t0 - 86400 : 0;
        fr.t1 = fr.t0 + 2 * 86400;
    } else {
        double pad = (fr.t1 - fr.t0) * 0.02;
        fr.t0 -= pad;
        fr.t1 += pad;
    }
    if (!(fr.y1 > fr.y0)) {
        double mid = isfinite(fr.y0) ? fr.y0 : 1;
        fr.y0 = mid * 0.99;
        fr.y1 = mid * 1.01;
    }
    double pad = (fr.y1 - fr.y0) * 0.08;
    /* a time is never negative: the margin below stops at 0 */
    fr.y0 = fr.y0 >= 0 && fr.y0 - pad < 0 ? 0 : fr.y0 - pad;
    fr.y1 += pad;
    return fr;
}

static void axes(FILE *f, const struct frame *fr)
{
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
            "stroke=\"#bbb\"/>", LEFT, TOP, W - LEFT - RIGHT, H - TOP - BOTTOM);
    for (int k = 0; k <= 4; k++) {
        double v = fr->y0 + (fr->y1 - fr->y0) * k / 4, y = py(fr, v);
        fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>",
                LEFT, W - RIGHT, y, y, LEFT - 4, y + 3, v);
        double t = fr->t0 + (fr->t1 - fr->t0) * k / 4;
        time_t tt = (time_t)t;
        struct tm tm;
        char day[16];
        gmtime_r(&tt, &tm);
        /* Days for nightly series; hours and minutes, or seconds, for
         * runs closer together (several a day, or a bisection's). */
        double span = fr->t1 - fr->t0;
        strftime(day, sizeof day, span > 3 * 86400 ? "%Y-%m-%d"
                 : span > 3600 ? "%m-%d %H:%M" : "%H:%M:%S", &tm);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%s</text>",
                px(fr, t), H - BOTTOM + 14, k == 0 ? "start" : k == 4 ? "end" : "middle",
                day);
    }
    fprintf(f, "<text x=\"12\" y=\"%d\" transform=\"rotate(-90 12 %d)\" "
            "text-anchor=\"middle\">median step time, %s</text>", (TOP + H - BOTTOM) / 2,
            (TOP + H - BOTTOM) / 2, fr->unit);
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of points [lo, hi) as a line across their times. */
static void segment_line(FILE *f, const struct frame *fr, const struct dlb_series *s,
                         size_t lo, size_t hi, const char *colour)
{
    double *v = malloc((hi - lo) * sizeof *v);
    if (!v || hi <= lo) {
        free(v);
        return;
    }
    for (size_t i = lo; i < hi; i++)
        v[i - lo] = fr->scale * s->pts[i].median_s;
    qsort(v, hi - lo, sizeof *v, by_double);
    size_t n = hi - lo;
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    free(v);
    fprintf(f, "<line class=\"segment\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"%s\" stroke-opacity=\"0.45\" stroke-width=\"3\"/>",
            px(fr, dlb_dash_time(s->pts[lo].start_utc)),
            px(fr, dlb_dash_time(s->pts[hi - 1].start_utc)), py(fr, med), py(fr, med), colour);
}

static void series(FILE *f, const struct frame *fr, const struct dlb_dash_chart *c,
                   size_t k)
{
    const struct dlb_series *s = c->series[k];
    const char *colour = dlb_dash_colour(c->machine_of[k]);
    fputs("<g class=\"series\" data-machine=\"", f);
    dlb_html_put(f, s->machine);
    fputs("\">", f);
    size_t lo = 0;
    for (size_t j = 0; j < c->n_cps; j++)
        if (c->cp_series[j] == k) {
            segment_line(f, fr, s, lo, c->cps[j]->at, colour);
            lo = c->cps[j]->at;
        }
    segment_line(f, fr, s, lo, s->n, colour);
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" points=\"", colour);
    for (size_t i = 0; i < s->n; i++)
        fprintf(f, "%.1f,%.1f ", px(fr, dlb_dash_time(s->pts[i].start_utc)),
                py(fr, fr->scale * s->pts[i].median_s));
    fputs("\"/>", f);
    for (size_t i = 0; i < s->n; i++) {
        const struct dlb_point *p = &s->pts[i];
        double x = px(fr, dlb_dash_time(p->start_utc));
        if (isfinite(p->ci_lo_s) && isfinite(p->ci_hi_s))
            fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                    "stroke-opacity=\"0.6\"/>", x, x, py(fr, fr->scale * p->ci_lo_s),
                    py(fr, fr->scale * p->ci_hi_s), colour);
        fprintf(f, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.4\" fill=\"%s\">"
                "<title>", x, py(fr, fr->scale * p->median_s), colour);
        dlb_html_put(f, p->start_utc);
        fputs(" ", f);
        dlb_html_put(f, p->commit);
        fprintf(f, ": %.4g %s (95%% CI %.4g-%.4g)</title></circle>",
                fr->scale * p->median_s, fr->unit, fr->scale * p->ci_lo_s,
                fr->scale * p->ci_hi_s);
    }
    fputs("</g>", f);
}

static void change_point(FILE *f, const struct frame *fr, const struct dlb_dash_chart *c,
                         size_t j, int row)
{
    const struct dlb_change *cp = c->cps[j];
    const struct dlb_series *s = c->series[c->cp_series[j]];
    const struct dlb_point *g = &s->pts[cp->at - 1], *b = &s->pts[cp->at];
    double x = (px(fr, dlb_dash_time(g->start_utc)) + px(fr, dlb_dash_time(b->start_utc))) / 2;
    char size[64];
    snprintf(size, sizeof size, isfinite(cp->ratio) ? "%+.1f%%" : "?",
             100 * (cp->ratio - 1));
    fputs("<g class=\"cp\" data-machine=\"", f);
    dlb_html_put(f, s->machine);
    fputs("\" data-range=\"", f);
    dlb_html_put(f, g->commit);
    fputs("..", f);
    dlb_html_put(f, b->commit);
    fprintf(f, "\"><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" "
            "stroke-width=\"2\" stroke-dasharray=\"5,3\"/>", x, x, TOP - 2, H - BOTTOM,
            CP_RED);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" fill=\"%s\" text-anchor=\"%s\">", x, 11 + 11 * row,
            CP_RED, x > W / 2 ? "end" : "start");
    fprintf(f, "%.8s..%.8s %s", g->commit, b->commit, size);
    fputs("</text><title>", f);
    dlb_html_put(f, g->commit);
    fputs(" .. ", f);
    dlb_html_put(f, b->commit);
    fprintf(f, ": median step time x%.3f (95%% CI %.3f-%.3f), %zu runs before, %zu after, "
            "p %.3g</title></g>", cp->ratio, cp->lo, cp->hi, cp->at - cp->seg_lo,
            cp->seg_hi - cp->at, cp->p);
}

void dlb_dash_chart(FILE *f, const struct dlb_dash_chart *c)
{
    struct frame fr = frame_of(c);
    fputs("<div class=\"chart\"><h3>", f);
    dlb_html_put(f, c->config);
    fprintf(f, "</h3><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" role=\"img\"><title>", W, H, W, H);
    dlb_html_put(f, c->suite);
    fputs(": ", f);
    dlb_html_put(f, c->config);
    fputs("</title>", f);
    axes(f, &fr);
    for (size_t k = 0; k < c->n; k++)
        series(f, &fr, c, k);
    for (size_t j = 0; j < c->n_cps; j++)
        change_point(f, &fr, c, j, (int)(j % 2));
    fputs("</svg></div>\n", f);
}
