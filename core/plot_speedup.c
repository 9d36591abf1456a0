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
#include "plot_impl.h"

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
    "title 'speedup (green faster, red slower, grey the baseline)', \\\n"
    "     '' using ($7 > 0 ? 1/0 : $3):1:4:5 with xerrorbars lc rgb 'black' pt -1 lw 1.5 title '95%% CI', \\\n"
    "     '' using ($7 > 0 ? 1/0 : $5):1:(sprintf(' %%.2fx', $3)) with labels left font ',9' notitle\n";

static json_t *find_record(json_t *records, const char *id)
{
    size_t i;
    json_t *rec;
    json_array_foreach(records, i, rec)
        if (dlb_rec_ok(rec) && !strcmp(dlb_rec_id(rec), id))
            return rec;
    return NULL;
}

/* The baseline record: the selection's, else the first record that ran. */
static json_t *baseline_record(json_t *records, json_t *selection)
{
    const char *id = json_string_value(json_object_get(selection, "baseline"));
    if (id)
        return find_record(records, id);
    size_t i;
    json_t *rec;
    json_array_foreach(records, i, rec)
        if (dlb_rec_ok(rec))
            return rec;
    return NULL;
}

/* Whether any record names `id` as its own baseline. */
static int is_own_baseline(json_t *records, const char *id)
{
    size_t i;
    json_t *rec;
    json_array_foreach(records, i, rec) {
        const char *b = json_string_value(
            json_object_get(json_object_get(rec, "vs_baseline"), "baseline_id"));
        if (b && !strcmp(b, id))
            return 1;
    }
    return 0;
}

static int any_vs_baseline(json_t *records)
{
    size_t i;
    json_t *rec;
    json_array_foreach(records, i, rec)
        if (json_is_number(json_object_get(json_object_get(rec, "vs_baseline"), "speedup")))
            return 1;
    return 0;
}

/* Against the row's own baseline: 1 when it has one, with *is_base set for
 * a row that is a baseline itself. */
static int own_speedup_of(json_t *records, json_t *rec, double *s, double *lo,
                          double *hi, int *is_base)
{
    json_t *vb = json_object_get(rec, "vs_baseline");
    *is_base = 0;
    if (json_is_number(json_object_get(vb, "speedup"))) {
        *s = *lo = *hi = json_number_value(json_object_get(vb, "speedup"));
        if (json_is_number(json_object_get(vb, "speedup_ci_lo")) &&
            json_is_number(json_object_get(vb, "speedup_ci_hi"))) {
            *lo = json_number_value(json_object_get(vb, "speedup_ci_lo"));
            *hi = json_number_value(json_object_get(vb, "speedup_ci_hi"));
        }
        return 1;
    }
    if (is_own_baseline(records, dlb_rec_id(rec))) {
        *s = *lo = *hi = 1.0;
        *is_base = 1;
        return 1;
    }
    return 0;
}

static int speedup_of(json_t *rec, json_t *base, json_t *per_config,
                      double *s, double *lo, double *hi)
{
    json_t *pc = json_object_get(per_config, dlb_rec_id(rec));
    json_t *sp = json_object_get(pc, "speedup");
    if (json_is_number(sp)) {
        *s = *lo = *hi = json_number_value(sp);
        json_t *ci = json_object_get(pc, "speedup_ci");
        if (json_is_number(json_array_get(ci, 0)) && json_is_number(json_array_get(ci, 1))) {
            *lo = json_number_value(json_array_get(ci, 0));
            *hi = json_number_value(json_array_get(ci, 1));
        }
        return 1;
    }
    int h[6];
    double m = dlb_rec_num(rec, "throughput", "median", &h[0]);
    double ml = dlb_rec_num(rec, "throughput", "ci_lo", &h[1]);
    double mh = dlb_rec_num(rec, "throughput", "ci_hi", &h[2]);
    double b = dlb_rec_num(base, "throughput", "median", &h[3]);
    double bl = dlb_rec_num(base, "throughput", "ci_lo", &h[4]);
    double bh = dlb_rec_num(base, "throughput", "ci_hi", &h[5]);
    if (!h[0] || !h[3] || b <= 0)
        return 0;
    *s = m / b;
    *lo = (h[1] && h[5] && bh > 0) ? ml / bh : *s;
    *hi = (h[2] && h[4] && bl > 0) ? mh / bl : *s;
    return 1;
}

/* A bar's label: the row number of the table and what the row changes
 * from its baseline, the tokens of its id that the baseline's lacks
 * ("7: prune.enable=on prune.sparsity=0.9"); full ids ran past the
 * canvas and read alike. */
static void bar_label(json_t *rec, const char *base_id, int is_base, char *buf,
                      size_t len)
{
    const char *id = dlb_rec_id(rec);
    size_t used = (size_t)snprintf(buf, len, "%lld:", (long long)json_integer_value(
                                       json_object_get(rec, "index")));
    if (is_base || !base_id) {
        snprintf(buf + used, len - used, " %s", is_base ? "baseline" : id);
        return;
    }
    for (const char *t = id; *t;) {
        size_t n = strcspn(t, " ");
        int in_base = 0;
        for (const char *w = base_id; *w && !in_base;) {
            size_t m = strcspn(w, " ");
            in_base = m == n && !strncmp(w, t, n);
            w += m + (w[m] == ' ');
        }
        if (!in_base && used + n + 2 < len)
            used += (size_t)snprintf(buf + used, len - used, " %.*s", (int)n, t);
        t += n + (t[n] == ' ');
    }
}

static int group_of(json_t *per_config, json_t *rec)
{
    json_t *g = json_object_get(json_object_get(per_config, dlb_rec_id(rec)), "group");
    return json_is_integer(g) ? (int)json_integer_value(g) : -1;
}

dlb_status dlb_plot_speedup(struct dlb_plotter *p, json_t *records,
                            json_t *selection, struct dlb_error *err)
{
    json_t *base = baseline_record(records, selection);
    json_t *per_config = json_object_get(selection, "per_config");
    json_t *groups = json_object_get(selection, "groups");
    size_t n_groups = json_array_size(groups) > 1 ? json_array_size(groups) : 1;
    int own = any_vs_baseline(records);
    /* Several workloads and no setting to compare within one (the infer
     * suite's batch sizes): every bar would be a baseline at 1x. */
    if (!base || json_array_size(records) < 2 || (!own && n_groups > 1))
        return DLB_OK;
    FILE *f = dlb_plot_data_open(p, "speedup",
        "x, configuration, speedup, ci_lo, ci_hi (x), colour (0xRRGGBB), "
        "heading row (1: a workload's name, no bar)", err);
    if (!f)
        return DLB_ERR_IO;
    int x = 0;
    for (size_t g = 0; g < n_groups; g++) {
        const char *wl = n_groups > 1 ? json_string_value(json_object_get(
                             json_array_get(groups, g), "workload")) : NULL;
        int heading = 0;
        size_t i;
        json_t *rec;
        json_array_foreach(records, i, rec) {
            double s, lo, hi;
            int is_base = rec == base;
            if (!dlb_rec_ok(rec) || (wl && group_of(per_config, rec) != (int)g) ||
                !(own ? own_speedup_of(records, rec, &s, &lo, &hi, &is_base)
                      : speedup_of(rec, base, per_config, &s, &lo, &hi)))
                continue;
            if (wl && !heading++) {
                fprintf(f, "%d ", x++);
                char head[512];
                snprintf(head, sizeof head, "[%s]", wl);
                dlb_plot_label(f, head);
                fprintf(f, " 0 0 0 %ld 1\n", 0xffffffL);
            }
            char label[512];
            const char *bid = json_string_value(json_object_get(
                json_object_get(rec, "vs_baseline"), "baseline_id"));
            bar_label(rec, own ? bid : dlb_rec_id(base), is_base, label,
                      sizeof label);
            fprintf(f, "%d ", x++);
            dlb_plot_label(f, label);
            long colour = is_base ? 0x999999 : s >= 1 ? 0x31a354 : 0xde2d26;
            fprintf(f, " %.9g %.9g %.9g %ld 0\n", s, lo, hi, colour);
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
