/* The report's table of configurations. A full configuration string on
 * every row ("model=vgg-small batch=64 amp.precision=bf16
 * amp.loss_scale=none") hides the one setting a reader compares: the rows
 * of each workload sit under a head row naming the workload and its
 * baseline, and each row shows what differs from that baseline. The plugin
 * figures column shows, with units, the figures that say something about
 * the row: those that differ from its baseline's, never a zero counter. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_impl.h"
#include "util/words.h"

static const struct dlb_record *find(const struct dlb_record *recs, size_t n,
                                     const char *id)
{
    for (size_t i = 0; id && i < n; i++)
        if (recs[i].id && !strcmp(recs[i].id, id))
            return &recs[i];
    return NULL;
}

/* One figure with its unit, as a reader takes it in: bytes in MiB,
 * seconds in ms, shares with a % sign. */
static int figure_text(char *buf, size_t len, const struct dlb_rec_metric *m)
{
    const char *u = m->unit ? m->unit : "";
    double v = m->value;
    if (!strcmp(u, "%"))
        return snprintf(buf, len, "%s %.3g%%", m->name, v);
    if (!strcmp(u, "bytes"))
        return fabs(v) >= 1048576 ? snprintf(buf, len, "%s %.1f MiB", m->name, v / 1048576)
               : fabs(v) >= 1024  ? snprintf(buf, len, "%s %.1f KiB", m->name, v / 1024)
                                  : snprintf(buf, len, "%s %.0f B", m->name, v);
    if (!strcmp(u, "s"))
        return fabs(v) >= 1     ? snprintf(buf, len, "%s %.3g s", m->name, v)
               : fabs(v) >= 1e-3 ? snprintf(buf, len, "%s %.3g ms", m->name, v * 1e3)
                                 : snprintf(buf, len, "%s %.3g us", m->name, v * 1e6);
    char num[64];
    dlb_rep_num(num, sizeof num, v); /* 320000, not 3.2e+05 */
    if (!u[0] || !strcmp(u, "fraction") || !strcmp(u, "count"))
        return snprintf(buf, len, "%s %s", m->name, num);
    return snprintf(buf, len, "%s %s %s", m->name, num, u);
}

/* Whether figure m of a row says something: not zero, and, on a row that
 * is compared with a baseline, not what the baseline has. */
static int telling(const struct dlb_rec_metric *m, const struct dlb_record *base)
{
    if (!isfinite(m->value) || m->value == 0)
        return 0;
    double b;
    if (!base || !dlb_record_metric_value(base, m->name, &b))
        return 1;
    return fabs(m->value - b) > 1e-9 * fmax(fabs(m->value), fabs(b));
}

/* The plugins' figures (a dotted name: "amp.cast_share") that say
 * something; `base` NULL on a baseline's own row. */
static void figures(char *buf, size_t len, const struct dlb_record *rec,
                    const struct dlb_record *base)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < rec->n_metrics; i++) {
        const struct dlb_rec_metric *m = &rec->metrics[i];
        char one[128];
        if (!strchr(m->name, '.') || !telling(m, base))
            continue;
        int k = figure_text(one, sizeof one, m);
        if (k <= 0 || used + (size_t)k + 3 >= len)
            continue;
        used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "; " : "", one);
    }
}

static const char *known(const char *s)
{
    return s ? s : "unknown";
}

/* The row of `rec`, in a workload whose baseline is `base_id` (NULL: no
 * baseline) and whose own settings are `workload` ("" when none). */
static void row(struct dlb_rep_row *row, const struct dlb_record *rec,
                const struct dlb_record *recs, size_t n,
                const struct dlb_selection *sel, const char *workload,
                const char *base_id)
{
    const char *id = rec->id;
    const struct dlb_sel_config *pc = dlb_selection_config(sel, id);
    const struct dlb_rec_throughput *tp = &rec->throughput;
    char (*c)[256] = row->cell;
    int is_base = base_id && !strcmp(base_id, id);
    snprintf(c[0], 256, "%lld", rec->index);
    if (is_base)
        snprintf(c[1], 256, "baseline");
    else
        dlb_words_not_in(c[1], 256, id, base_id ? base_id : workload);
    row->winner = dlb_sel_ids_has(&sel->winners, id);
    row->tied = dlb_sel_ids_has(&sel->ties, id);
    row->pareto = dlb_sel_ids_has(&sel->pareto, id);
    for (size_t i = 0; i < sel->n_violations; i++)
        row->violates |= !strcmp(known(sel->violations[i].id), id);
    const char *status = dlb_rec_status_name(rec->status);
    if (rec->status != DLB_REC_OK)
        snprintf(c[2], 256, "%s: %s", status, rec->reason ? rec->reason : "unknown");
    else if (pc->eliminated_in_round >= 0)
        snprintf(c[2], 256, "eliminated in round %lld", pc->eliminated_in_round);
    else
        snprintf(c[2], 256, "%s%s%s%s", row->winner ? "winner" : "ok",
                 row->tied ? ", tied" : "", row->violates ? ", breaks a constraint" : "",
                 row->pareto ? ", Pareto" : "");
    if (!isnan(tp->median)) {
        char m[64], lo[64], hi[64];
        dlb_rep_num(m, sizeof m, tp->median);
        dlb_rep_num(lo, sizeof lo, dlb_rep_or0(tp->ci_lo));
        dlb_rep_num(hi, sizeof hi, dlb_rep_or0(tp->ci_hi));
        snprintf(c[3], 256, "%s [%s, %s]", m, lo, hi);
    }
    if (!isnan(pc->speedup))
        snprintf(c[4], 256, "%.3g [%.3g, %.3g]", pc->speedup,
                 dlb_rep_or0(pc->speedup_ci_lo), dlb_rep_or0(pc->speedup_ci_hi));
    double acc, sd;
    size_t seeds = json_array_size(json_object_get(rec->json, "seeds"));
    if (dlb_record_metric_value(rec, "accuracy", &acc))
        snprintf(c[5], 256, "%.2f", acc);
    if (seeds > 1 && dlb_record_metric_value(rec, "accuracy_sd", &sd))
        snprintf(c[5], 256, "%.2f (sd %.2f, %zu seeds)", acc, sd, seeds);
    if (!isnan(pc->accuracy_drop) && !isnan(pc->accuracy_drop_ci))
        snprintf(c[6], 256, "%.2f +-%.2f", pc->accuracy_drop, pc->accuracy_drop_ci);
    else if (!isnan(pc->accuracy_drop))
        snprintf(c[6], 256, "%.2f", pc->accuracy_drop);
    if (!isnan(pc->peak_memory))
        dlb_rep_bytes(c[7], 256, pc->peak_memory);
    figures(c[8], 256, rec, is_base ? NULL : find(recs, n, base_id));
}

/* The head row of a workload: its settings and its baseline's. */
static void head(struct dlb_rep_row *row, const char *workload, const char *base_id)
{
    char base[256] = "";
    row->head = 1;
    if (base_id)
        dlb_words_not_in(base, sizeof base, base_id, workload);
    snprintf(row->cell[1], 256, "%s%s%s%s", workload[0] ? workload : "",
             workload[0] && base_id ? ": " : "", base_id ? "baseline " : "",
             base);
}

int dlb_rep_rows(struct dlb_rep *r, const struct dlb_record *recs, size_t n,
                 const struct dlb_selection *sel)
{
    size_t ng = sel->n_groups;
    unsigned char *shown = calloc(n ? n : 1, 1);
    r->rows = calloc(n + ng + 1, sizeof *r->rows);
    if (!r->rows || !shown) {
        free(shown);
        return -1;
    }
    /* A table of one configuration has nothing to set it against. */
    for (size_t g = 0; n > 1 && g < ng; g++) {
        const struct dlb_sel_group *grp = &sel->groups[g];
        const char *wl = grp->workload ? grp->workload : "";
        size_t first = r->n_rows;
        r->n_rows++; /* the head, filled once the group has a row */
        for (size_t i = 0; i < n; i++)
            if (!shown[i] && dlb_sel_ids_has(&grp->configs, recs[i].id)) {
                row(&r->rows[r->n_rows++], &recs[i], recs, n, sel, wl, grp->baseline);
                shown[i] = 1;
            }
        if (r->n_rows == first + 1)
            r->n_rows--;
        else
            head(&r->rows[first], wl, grp->baseline);
    }
    for (size_t i = 0; i < n; i++)
        if (!shown[i])
            row(&r->rows[r->n_rows++], &recs[i], recs, n, sel, "", NULL);
    free(shown);
    return 0;
}
