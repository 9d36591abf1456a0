/* The verdicts and the winners in words, once, for the console summary,
 * report.md and report.html. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report_impl.h"

static const char *s_of(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

void dlb_rep_verdict_row(char *buf, size_t len, json_t *row)
{
    const char *wl = s_of(row, "workload");
    json_t *sp = json_object_get(row, "speedup"), *ci = json_object_get(row, "speedup_ci");
    json_t *acc = json_object_get(row, "accuracy_change");
    json_t *acc_ci = json_object_get(row, "accuracy_ci");
    json_t *mem = json_object_get(row, "memory_change");
    size_t used = (size_t)snprintf(buf, len, "%s%s", wl[0] ? wl : "", wl[0] ? ": " : "");
    if (!json_is_number(sp)) {
        snprintf(buf + used, len - used, "%s (%s)", s_of(row, "verdict"),
                 s_of(row, "why"));
        return;
    }
    used += (size_t)snprintf(buf + used, len - used, "%.2fx (%.2f-%.2f)",
                             json_number_value(sp),
                             json_number_value(json_array_get(ci, 0)),
                             json_number_value(json_array_get(ci, 1)));
    if (json_is_number(acc) && used < len)
        used += (size_t)snprintf(buf + used, len - used, ", accuracy %+.2f%s",
                                 json_number_value(acc),
                                 json_is_number(acc_ci) ? "" : " points");
    if (json_is_number(acc) && json_is_number(acc_ci) && used < len)
        used += (size_t)snprintf(buf + used, len - used, " +-%.2f points",
                                 json_number_value(acc_ci));
    if (json_object_get(row, "accuracy_note") && used < len)
        used += (size_t)snprintf(buf + used, len - used, ", accuracy %s",
                                 s_of(row, "accuracy_note"));
    if (json_is_number(mem) && used < len)
        used += (size_t)snprintf(buf + used, len - used,
                                 fabs(json_number_value(mem)) < 0.1
                                     ? ", memory %+.1f%%" : ", memory %+.0f%%",
                                 100 * json_number_value(mem));
    if (used < len) {
        const char *v = s_of(row, "verdict");
        /* the reason only when it says more than the interval does */
        int plain = !strncmp(s_of(row, "why"), "faster", 6) ||
                    !strncmp(s_of(row, "why"), "slower", 6) ||
                    !strncmp(s_of(row, "why"), "the speedup", 11);
        snprintf(buf + used, len - used, ": %s%s%s%s", v, plain ? "" : " (",
                 plain ? "" : s_of(row, "why"), plain ? "" : ")");
    }
}

void dlb_rep_group_winner(char *buf, size_t len, json_t *sel, json_t *group)
{
    const char *wl = s_of(group, "workload"), *w = s_of(group, "winner");
    char head[600];
    snprintf(head, sizeof head, "%s%s", wl[0] ? wl : "", wl[0] ? ": " : "");
    if (!w[0]) {
        snprintf(buf, len, "%sno winner: %s", head, s_of(group, "why"));
        return;
    }
    struct dlb_rec_selection pc;
    dlb_record_selection(sel, w, &pc);
    char fig[400] = "";
    if (json_array_size(json_object_get(group, "configs")) == 1)
        snprintf(fig, sizeof fig, " (its only configuration: nothing to tune)");
    else if (!strcmp(w, s_of(group, "baseline")))
        snprintf(fig, sizeof fig, " (the baseline: no setting beats it)");
    else if (!isnan(pc.speedup)) {
        int used = snprintf(fig, sizeof fig, ", %.2fx (%.2f-%.2f) over %s",
                            pc.speedup, dlb_rep_or0(pc.speedup_ci_lo),
                            dlb_rep_or0(pc.speedup_ci_hi), s_of(group, "baseline"));
        if (!isnan(pc.accuracy_drop) && used > 0 && (size_t)used < sizeof fig)
            snprintf(fig + used, sizeof fig - (size_t)used, ", accuracy drop "
                     "%.2f points", pc.accuracy_drop);
    }
    snprintf(buf, len, "%s%s%s", head, w, fig);
}

void dlb_report_verdicts(FILE *f, json_t *sel)
{
    json_t *verdicts = json_object_get(sel, "verdicts"), *v, *row;
    size_t i, j;
    char line[1400];
    if (!json_array_size(verdicts)) {
        if (json_array_size(json_object_get(sel, "groups")) > 1)
            fprintf(f, "\nverdicts: none: no configuration changes a setting "
                       "of its workload's baseline (every axis is a workload "
                       "axis)\n");
        return;
    }
    fprintf(f, "\nverdicts (each setting against its workload's baseline: "
               "speedup with its 95%% CI, accuracy change +- its 95%% CI)\n");
    json_array_foreach(verdicts, i, v) {
        json_t *rows = json_object_get(v, "workloads");
        fprintf(f, "  %s: %s\n", s_of(v, "setting"), s_of(v, "summary"));
        if (!strcmp(s_of(v, "verdict"), "not measured"))
            continue;
        json_array_foreach(rows, j, row) {
            dlb_rep_verdict_row(line, sizeof line, row);
            fprintf(f, "      %s\n", line);
        }
    }
}
