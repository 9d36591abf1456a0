/* Speedup of each configuration over its own baseline: the same workload
 * (model, batch ... as the suite's workload_axes say) with the suite
 * baseline's settings, as the records' vs_baseline says. Several
 * workloads are drawn in blocks, each under a heading row with its
 * workload; a bar is labelled with its row number and what it changes
 * from its baseline. Against one baseline for all, the amp
 * suite's vgg-small rows showed as 0.03-0.07x of LeNet's, and bf16's real
 * effect was nowhere in the picture. A run whose rows have no such partner
 * (no plugin axes) is drawn against the selection's baseline, from its
 * per_config figures or the throughput medians (the interval then combines
 * both medians' intervals, so it is conservative). */
#include "plot/plot_impl.h"

#include <math.h>
#include <string.h>

static const char body_fmt[] =
    "set style fill solid 0.85 border rgb 'gray30'\n"
    "set xrange [0:*]\n"
    "set offsets 0, graph 0.12, 0, 0\n"
    "set yrange [%d.5:-0.5]\n"
    "set ytics nomirror\n"
    "set grid xtics lc rgb 'gray80'\n"
    "set key above horizontal maxrows 1\n"
    "set arrow 1 from first 1, graph 0 to first 1, graph 1 nohead dt 2 lw 1.5 lc rgb 'gray20'\n"
    "set xlabel 'speedup over the baseline (x, ratio of throughputs; 1 = as fast)'\n"
    "plot 'speedup.dat' using 3:1:(0):3:($1-0.35):($1+0.35):6:ytic(2) with boxxyerror lc rgb variable "
    "notitle, \\\n"
    "     keyentry with boxes fs solid 0.85 lc rgb '#31a354' title 'pays off', \\\n"
    "     keyentry with boxes fs solid 0.85 lc rgb '#bdbdbd' title 'no measurable effect', \\\n"
    "     keyentry with boxes fs solid 0.85 lc rgb '#de2d26' title 'costs', \\\n"
    "     keyentry with boxes fs solid 0.85 lc rgb '#fd8d3c' title 'doubtful', \\\n"
    "     keyentry with boxes fs solid 0.85 lc rgb '#636363' title 'baseline', \\\n"
    "     '' using ($7 > 0 ? 1/0 : $3):1:4:5 with xerrorbars lc rgb 'black' pt -1 lw 1.5 title '95%% CI', \\\n"
    "     '' using ($7 > 0 ? 1/0 : $5):1:(sprintf(' %%.2fx', $3)) with labels left font ',9' notitle\n";

static const struct dlb_record *find_record(struct dlb_plot_recs recs,
                                            const char *id)
{
    for (size_t i = 0; i < recs.n; i++)
        if (recs.v[i]->status == DLB_REC_OK && !strcmp(recs.v[i]->id, id))
            return recs.v[i];
    return NULL;
}

/* The baseline record: the selection's, else the first record that ran. */
static const struct dlb_record *baseline_record(struct dlb_plot_recs recs,
                                                const struct dlb_selection *selection)
{
    const char *id = selection->baseline;
    if (id)
        return find_record(recs, id);
    for (size_t i = 0; i < recs.n; i++)
        if (recs.v[i]->status == DLB_REC_OK)
            return recs.v[i];
    return NULL;
}

/* Whether any record names `id` as its own baseline. */
static int is_own_baseline(struct dlb_plot_recs recs, const char *id)
{
    for (size_t i = 0; i < recs.n; i++) {
        const char *b = recs.v[i]->vs_baseline.baseline_id;
        if (b && !strcmp(b, id))
            return 1;
    }
    return 0;
}

static int any_vs_baseline(struct dlb_plot_recs recs)
{
    for (size_t i = 0; i < recs.n; i++)
        if (!isnan(recs.v[i]->vs_baseline.speedup))
            return 1;
    return 0;
}

/* Against the row's own baseline: 1 when it has one, with *is_base set for
 * a row that is a baseline itself. */
static int own_speedup_of(struct dlb_plot_recs recs, const struct dlb_record *rec,
                          double *s, double *lo, double *hi, int *is_base)
{
    const struct dlb_rec_vs_baseline *vb = &rec->vs_baseline;
    *is_base = 0;
    if (!isnan(vb->speedup)) {
        *s = *lo = *hi = vb->speedup;
        if (!isnan(vb->speedup_ci_lo) && !isnan(vb->speedup_ci_hi)) {
            *lo = vb->speedup_ci_lo;
            *hi = vb->speedup_ci_hi;
        }
        return 1;
    }
    if (is_own_baseline(recs, rec->id)) {
        *s = *lo = *hi = 1.0;
        *is_base = 1;
        return 1;
    }
    return 0;
}

static int speedup_of(const struct dlb_record *rec, const struct dlb_record *base,
                      const struct dlb_selection *selection, double *s, double *lo, double *hi)
{
    const struct dlb_sel_config *pc = dlb_selection_config(selection, rec->id);
    if (!isnan(pc->speedup)) {
        *s = *lo = *hi = pc->speedup;
        if (!isnan(pc->speedup_ci_lo) && !isnan(pc->speedup_ci_hi)) {
            *lo = pc->speedup_ci_lo;
            *hi = pc->speedup_ci_hi;
        }
        return 1;
    }
    const struct dlb_rec_throughput *t = &rec->throughput, *b = &base->throughput;
    if (isnan(t->median) || isnan(b->median) || b->median <= 0)
        return 0;
    *s = t->median / b->median;
    *lo = (!isnan(t->ci_lo) && !isnan(b->ci_hi) && b->ci_hi > 0) ? t->ci_lo / b->ci_hi : *s;
    *hi = (!isnan(t->ci_hi) && !isnan(b->ci_lo) && b->ci_lo > 0) ? t->ci_hi / b->ci_lo : *s;
    return 1;
}

/* Whether the space-separated list holds the token tok[0..n). */
static int has_token(const char *list, const char *tok, size_t n)
{
    for (const char *w = list; *w;) {
        size_t m = strcspn(w, " ");
        if (m == n && !strncmp(w, tok, n))
            return 1;
        w += m + (w[m] == ' ');
    }
    return 0;
}

/* A bar's label: the row number of the table and what the row changes
 * from its baseline, the tokens of its id that the baseline's lacks
 * ("7: prune.enable=on prune.sparsity=0.9"); full ids ran past the
 * canvas and read alike. */
static void bar_label(const struct dlb_record *rec, const char *base_id,
                      int is_base, char *buf, size_t len)
{
    const char *id = rec->id;
    size_t used = (size_t)snprintf(buf, len, "%lld:", rec->index);
    if (is_base || !base_id) {
        snprintf(buf + used, len - used, " %s", is_base ? "baseline" : id);
        return;
    }
    for (const char *t = id; *t;) {
        size_t n = strcspn(t, " ");
        if (!has_token(base_id, t, n) && used + n + 2 < len)
            used += (size_t)snprintf(buf + used, len - used, " %.*s", (int)n, t);
        t += n + (t[n] == ' ');
    }
}

/* Whether the space-separated tokens of a and b are the same set (a
 * verdict's setting puts a plugin's enable first; the id keeps suite
 * order). */
static int same_tokens(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    for (const char *t = a; *t;) {
        size_t n = strcspn(t, " ");
        if (n && !has_token(b, t, n))
            return 0;
        na += n > 0;
        t += n + (t[n] == ' ');
    }
    for (const char *w = b; *w;) {
        size_t m = strcspn(w, " ");
        nb += m > 0;
        w += m + (w[m] == ' ');
    }
    return na == nb;
}

/* A bar's verdict: the selection's for this setting on this workload
 * (it also counts broken constraints), else read off the interval as the
 * selection would. A doubtful measurement (record.h, system.doubtful)
 * is marked so whatever its interval says. */
static enum dlb_plot_verdict bar_verdict(const struct dlb_selection *sel,
                                         const struct dlb_record *rec,
                                         const char *workload, const char *change,
                                         int is_base, double lo, double hi)
{
    if (is_base)
        return DLB_PLOT_VERDICT_BASELINE;
    if (rec->system.doubtful)
        return DLB_PLOT_VERDICT_DOUBTFUL;
    for (size_t i = 0; i < sel->n_verdicts; i++) {
        const struct dlb_sel_verdict *v = &sel->verdicts[i];
        if (!v->setting || !same_tokens(v->setting, change))
            continue;
        for (size_t j = 0; j < v->n_rows; j++) {
            const char *w = v->rows[j].workload, *word = v->rows[j].verdict;
            if (!word || (workload && (!w || strcmp(w, workload))))
                continue;
            if (!strcmp(word, "pays off"))
                return DLB_PLOT_VERDICT_PAYS_OFF;
            if (!strcmp(word, "costs"))
                return DLB_PLOT_VERDICT_COSTS;
            if (!strcmp(word, "no measurable effect"))
                return DLB_PLOT_VERDICT_NONE;
        }
    }
    return lo > 1 ? DLB_PLOT_VERDICT_PAYS_OFF : hi < 1 ? DLB_PLOT_VERDICT_COSTS
                                                       : DLB_PLOT_VERDICT_NONE;
}

long dlb_plot_verdict_colour(enum dlb_plot_verdict v)
{
    static const long colour[] = {0x636363, 0x31a354, 0xbdbdbd, 0xde2d26, 0xfd8d3c};
    return colour[v];
}

static int group_of(const struct dlb_selection *selection, const struct dlb_record *rec)
{
    const struct dlb_sel_config *pc = dlb_selection_config(selection, rec->id);
    return pc->group >= 0 ? (int)pc->group : -1;
}

dlb_status dlb_plot_speedup(struct dlb_plotter *p, struct dlb_plot_recs recs,
                            const struct dlb_selection *selection, struct dlb_error *err)
{
    const struct dlb_record *base = baseline_record(recs, selection);
    size_t n_groups = selection->n_groups > 1 ? selection->n_groups : 1;
    int own = any_vs_baseline(recs);
    /* Several workloads and no setting to compare within one (the infer
     * suite's batch sizes): every bar would be a baseline at 1x. */
    if (!base || recs.n < 2 || (!own && n_groups > 1))
        return DLB_OK;
    FILE *f = dlb_plot_data_open(p, "speedup",
        "x, configuration, speedup, ci_lo, ci_hi (x), colour (0xRRGGBB), "
        "heading row (1: a workload's name, no bar), verdict (0 baseline, 1 pays "
        "off, 2 no measurable effect, 3 costs, 4 doubtful)", err);
    if (!f)
        return DLB_ERR_IO;
    int x = 0;
    for (size_t g = 0; g < n_groups; g++) {
        const char *wl = n_groups > 1 ? selection->groups[g].workload : NULL;
        int heading = 0;
        for (size_t i = 0; i < recs.n; i++) {
            const struct dlb_record *rec = recs.v[i];
            double s, lo, hi;
            int is_base = rec == base;
            if (rec->status != DLB_REC_OK ||
                (wl && group_of(selection, rec) != (int)g) ||
                !(own ? own_speedup_of(recs, rec, &s, &lo, &hi, &is_base)
                      : speedup_of(rec, base, selection, &s, &lo, &hi)))
                continue;
            if (wl && !heading++) {
                fprintf(f, "%d ", x++);
                char head[512];
                snprintf(head, sizeof head, "[%s]", wl);
                dlb_plot_label(f, head);
                fprintf(f, " 0 0 0 %ld 1 0\n", 0xffffffL);
            }
            char label[512];
            bar_label(rec, own ? rec->vs_baseline.baseline_id : base->id,
                      is_base, label, sizeof label);
            fprintf(f, "%d ", x++);
            dlb_plot_label(f, label);
            const char *change = strchr(label, ':') + 1;
            change += *change == ' ';
            enum dlb_plot_verdict v = bar_verdict(selection, rec, wl, change,
                                                  is_base, lo, hi);
            fprintf(f, " %.9g %.9g %.9g %ld 0 %d\n", s, lo, hi,
                    dlb_plot_verdict_colour(v), (int)v);
        }
    }
    dlb_status st = dlb_plot_data_close(f, "speedup", err);
    if (st != DLB_OK)
        return st;
    char body[2048];
    snprintf(body, sizeof body, body_fmt, x - 1);
    return dlb_plot_emit(p, "speedup", own ? (n_groups > 1
                         ? "Speedup over each workload's baseline, by workload"
                         : "Speedup over each row's own baseline")
                         : "Speedup over the baseline configuration", body,
                         dlb_plot_rows_height(x), err);
}
