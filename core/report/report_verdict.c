/* The verdicts and the winners in words, once, for the console summary,
 * report.md and report.html. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report_impl.h"
#include "util/figure.h"
#include "util/words.h"

static const char *s_of(const char *s)
{
    return s ? s : "";
}

/* Where a figure rests on a doubtful record, it says so beside itself:
 * "doubtful: ID: why; re-measure on a quiet machine". */
static void doubtful(char *buf, size_t len, const char *why)
{
    size_t used = strlen(buf);
    if (why && used < len)
        snprintf(buf + used, len - used, " (doubtful: %s; re-measure on a quiet "
                 "machine)", why);
}

/* ", accuracy +2.30 +-6.02 points over 5 seeds: no measurable effect",
 * or with one seed and its noise unknown ", accuracy +9.25 points (1 seed:
 * training noise not measured)": the change and how far it can be
 * trusted. Returns the length written, as snprintf. */
static size_t accuracy_words(char *buf, size_t len, double change, double half,
                             double seeds, const char *effect)
{
    int n;
    change = dlb_figure_unsigned_zero(change, 2);
    if (effect && !strcmp(effect, "training noise not measured"))
        n = snprintf(buf, len, ", accuracy %+.2f points (1 seed: training noise "
                     "not measured)", change);
    else if (effect && !isnan(half))
        n = snprintf(buf, len, ", accuracy %+.2f +-%.2f points over %.0f seed%s (%s)",
                     change, half, seeds, seeds == 1 ? " and the stated noise" : "s",
                     effect);
    else /* a record from before seeds were paired */
        n = isnan(half) ? snprintf(buf, len, ", accuracy %+.2f points", change)
                        : snprintf(buf, len, ", accuracy %+.2f +-%.2f points",
                                   change, half);
    return n > 0 ? (size_t)n : 0;
}

void dlb_rep_verdict_row(char *buf, size_t len, const struct dlb_sel_verdict_row *row)
{
    const char *wl = s_of(row->workload), *why = s_of(row->why);
    size_t used = (size_t)snprintf(buf, len, "%s%s", wl[0] ? wl : "", wl[0] ? ": " : "");
    if (isnan(row->speedup)) {
        snprintf(buf + used, len - used, "%s (%s)", s_of(row->verdict), why);
        doubtful(buf, len, row->doubtful_why);
        return;
    }
    used += (size_t)snprintf(buf + used, len - used, "%.2fx (%.2f-%.2f)",
                             row->speedup, dlb_rep_or0(row->speedup_ci_lo),
                             dlb_rep_or0(row->speedup_ci_hi));
    if (!isnan(row->accuracy_change) && used < len)
        used += accuracy_words(buf + used, len - used, row->accuracy_change,
                               row->accuracy_ci, row->accuracy_seeds,
                               row->accuracy_effect);
    if (row->accuracy_note && used < len)
        used += (size_t)snprintf(buf + used, len - used, ", accuracy %s",
                                 row->accuracy_note);
    if (!isnan(row->memory_change) && used < len)
        used += (size_t)snprintf(buf + used, len - used,
                                 fabs(row->memory_change) < 0.1
                                     ? ", memory %+.1f%%" : ", memory %+.0f%%",
                                 100 * row->memory_change);
    if (used < len) {
        /* the reason only when it says more than the interval does */
        int plain = !strncmp(why, "faster", 6) || !strncmp(why, "slower", 6) ||
                    !strncmp(why, "the speedup", 11);
        snprintf(buf + used, len - used, ": %s%s%s%s", s_of(row->verdict),
                 plain ? "" : " (", plain ? "" : why, plain ? "" : ")");
    }
    doubtful(buf, len, row->doubtful_why);
}

/* The winner's accuracy drop and whether the interval shows it within
 * accuracy_tolerance. */
static void drop_words(char *buf, size_t len, const struct dlb_sel_config *pc)
{
    const char *w = s_of(pc->accuracy_within);
    double drop = dlb_figure_unsigned_zero(pc->accuracy_drop, 2);
    /* a negative drop is a gain: said so, not as "drop -0.30" */
    const char *word = drop < 0 ? "gain" : "drop";
    drop = fabs(drop);
    if (!strcmp(w, "unchecked"))
        snprintf(buf, len, ", accuracy %s %.2f points (1 seed: training noise "
                 "not measured)", word, drop);
    else if (w[0] && !isnan(pc->accuracy_drop_ci))
        snprintf(buf, len, ", accuracy %s %.2f +-%.2f points over %.0f seed%s%s",
                 word, drop, pc->accuracy_drop_ci, pc->accuracy_seeds,
                 pc->accuracy_seeds == 1 ? " and the stated noise" : "s",
                 !strcmp(w, "yes") ? ", within accuracy_tolerance"
                 : !strcmp(w, "cannot tell") ? ": cannot tell whether within "
                                               "accuracy_tolerance"
                                             : "");
    else
        snprintf(buf, len, ", accuracy %s %.2f points", word, drop);
}

void dlb_rep_group_winner(char *buf, size_t len, const struct dlb_selection *sel,
                          const struct dlb_sel_group *group)
{
    const char *wl = s_of(group->workload), *w = s_of(group->winner);
    const char *base = s_of(group->baseline);
    char head[600];
    snprintf(head, sizeof head, "%s%s", wl[0] ? wl : "", wl[0] ? ": " : "");
    if (!w[0]) {
        snprintf(buf, len, "%sno winner: %s", head, s_of(group->why));
        return;
    }
    const struct dlb_sel_config *pc = dlb_selection_config(sel, w);
    /* The head names the workload: the winner and its baseline are said
     * by what they set beyond it */
    char ws[400], bs[440];
    dlb_words_not_in(ws, sizeof ws, w, wl);
    if (wl[0] || !strcmp(w, base))
        dlb_words_not_in(bs, sizeof bs, base, wl);
    else {
        /* one workload: the winner is named whole, as what to run; its
         * baseline by what it sets otherwise */
        char other[400];
        dlb_words_not_in(other, sizeof other, base, w);
        snprintf(bs, sizeof bs, "the baseline (%s)", other);
    }
    char fig[600] = "";
    if (group->configs.n == 1)
        snprintf(fig, sizeof fig, " (its only configuration: nothing to tune)");
    else if (!strcmp(w, base))
        snprintf(fig, sizeof fig, " (the baseline: no setting beats it)");
    else if (!isnan(pc->speedup)) {
        int used = snprintf(fig, sizeof fig, ", %.2fx (%.2f-%.2f) over %s",
                            pc->speedup, dlb_rep_or0(pc->speedup_ci_lo),
                            dlb_rep_or0(pc->speedup_ci_hi), bs);
        if (!isnan(pc->accuracy_drop) && used > 0 && (size_t)used < sizeof fig)
            drop_words(fig + used, sizeof fig - (size_t)used, pc);
    }
    snprintf(buf, len, "%s%s%s", head, ws, fig);
    doubtful(buf, len, group->winner_doubtful_why ? group->winner_doubtful_why
                                                  : pc->doubtful_why);
}

void dlb_report_verdicts(FILE *f, const struct dlb_selection *sel)
{
    char line[1400];
    if (!sel->n_verdicts) {
        if (sel->n_groups > 1)
            fprintf(f, "\nverdicts: none: no configuration changes a setting "
                       "of its workload's baseline (every axis is a workload "
                       "axis)\n");
        return;
    }
    fprintf(f, "\nverdicts (each setting against its workload's baseline: "
               "speedup with its 95%% CI, accuracy change over paired seeds +- "
               "its 95%% CI)\n");
    for (size_t i = 0; i < sel->n_verdicts; i++) {
        const struct dlb_sel_verdict *v = &sel->verdicts[i];
        fprintf(f, "  %s: %s%s\n", s_of(v->setting), s_of(v->summary),
                v->doubtful_why ? " (doubtful: see below)" : "");
        if (!strcmp(s_of(v->verdict), "not measured"))
            continue;
        for (size_t j = 0; j < v->n_rows; j++) {
            dlb_rep_verdict_row(line, sizeof line, &v->rows[j]);
            fprintf(f, "      %s\n", line);
        }
    }
}
