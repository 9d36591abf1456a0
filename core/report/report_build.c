/* The report's content, once, for both the Markdown and the HTML form:
 * environment, winner and why, one row per configuration, notes. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_impl.h"
#include "util/words.h"
#include "results/dataset_context.h"
#include "results/results.h" /* dlb_context_get */

const char *const dlb_rep_heads[DLB_REP_COLS] = {
    "#", "configuration", "status", "throughput (samples/s) [95% CI]",
    "speedup [CI]", "accuracy (%)", "accuracy drop (points)", "peak memory",
    "plugin figures"};

void dlb_rep_num(char *buf, size_t len, double v)
{
    snprintf(buf, len, fabs(v) >= 1e3 ? "%.0f" : "%.4g", v);
}

double dlb_rep_or0(double v)
{
    return isnan(v) ? 0 : v;
}

void dlb_rep_bytes(char *buf, size_t len, double v)
{
    snprintf(buf, len, "%.1f MiB", v / 1048576.0);
}

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(dlb_context_get(o, key));
    return s ? s : "unknown";
}

static const char *known(const char *s)
{
    return s ? s : "unknown";
}

/* The roofline the shares of peak are against, its age and why it was
 * chosen: a share is only as good as a probe of the same sitting. */
static void roofline(struct dlb_rep *r, json_t *ctx)
{
    json_t *pk = dlb_context_get(ctx, "peak");
    json_t *fig = dlb_context_get(pk, "figures");
    if (!json_is_object(fig) || r->n_env >= 10)
        return;
    json_t *fp32 = dlb_context_get(fig, "fp32");
    snprintf(r->env[r->n_env++], sizeof r->env[0], "roofline (the shares of peak): fp32 "
             "%.0f GFLOP/s on %lld threads, probed %s; %s",
             json_number_value(dlb_context_get(fp32, "gflops")),
             (long long)json_integer_value(dlb_context_get(fig, "threads")),
             str(pk, "measured_utc"), str(pk, "why"));
}

static void environment(struct dlb_rep *r, json_t *ctx)
{
    json_t *cpu = dlb_context_get(ctx, "cpu"), *suite = dlb_context_get(ctx, "suite");
    json_t *cores = dlb_context_get(cpu, "physical_cores");
    double mem = json_number_value(dlb_context_get(ctx, "memory_total_bytes"));
    char m[64];
    dlb_rep_bytes(m, sizeof m, mem);
    snprintf(r->title, sizeof r->title, "dlbench report: %s", str(suite, "name"));
    snprintf(r->env[r->n_env++], sizeof r->env[0], "host: %s, %s", str(ctx, "host"),
             str(dlb_context_get(ctx, "os"), "pretty_name"));
    snprintf(r->env[r->n_env++], sizeof r->env[0], "CPU: %s, %lld physical cores, %lld "
             "logical CPUs allowed, %s memory", str(cpu, "model"),
             json_is_integer(cores) ? (long long)json_integer_value(cores) : -1LL,
             (long long)json_integer_value(dlb_context_get(cpu, "logical_cpus_allowed")),
             m);
    json_t *cc = dlb_context_get(ctx, "compiler"), *d = dlb_context_get(ctx, "dlbench");
    snprintf(r->env[r->n_env++], sizeof r->env[0], "dlbench %s (%s), %s %s", str(d, "version"),
             str(d, "git_commit"), str(cc, "name"), str(cc, "version"));
    /* The data, as the configurations' records say: synthetic data and
     * padded images are said where the figures are read. */
    json_t *sets = dlb_context_get(ctx, "datasets"), *set;
    size_t k;
    json_array_foreach(sets, k, set) {
        char line[300];
        if (r->n_env >= 5) /* the devices and the lines after them */
            break;
        dlb_dataset_line(line, sizeof line, set);
        snprintf(r->env[r->n_env++], sizeof r->env[0], "data: %s%s", line,
                 json_is_true(dlb_context_get(set, "synthetic"))
                     ? " (synthetic: the figures of quality are not those of "
                       "real images)" : "");
    }
    /* The devices the configurations ran on, as their records say. */
    json_t *devs = dlb_context_get(ctx, "devices"), *dev;
    size_t i;
    json_array_foreach(devs, i, dev) {
        char dm[64] = "";
        json_t *tot = dlb_context_get(dev, "memory_total_bytes");
        long long units = (long long)json_integer_value(
            dlb_context_get(dev, "compute_units"));
        if (r->n_env >= 9) /* the roofline, measurement and run lines last */
            break;
        if (json_is_number(tot))
            dlb_rep_bytes(dm, sizeof dm, json_number_value(tot));
        snprintf(r->env[r->n_env++], sizeof r->env[0], "device (%s): %s%s%s, %lld compute "
                 "unit%s%s%s%s%s", str(dev, "backend"), str(dev, "name"),
                 *str(dev, "arch") ? ", arch " : "", str(dev, "arch"), units,
                 units == 1 ? "" : "s", dm[0] ? ", " : "", dm,
                 *str(dev, "driver") ? "; " : "", str(dev, "driver"));
    }
    roofline(r, ctx);
    json_t *ms = dlb_context_get(ctx, "measurement");
    json_t *il = dlb_context_get(ms, "interleave");
    if (json_is_object(ms) && r->n_env < 11) {
        char order[120] = "each configuration once, in plan order";
        if (json_is_object(il))
            snprintf(order, sizeof order, "%lld passes, each in its own random "
                     "order (seed %lld)",
                     (long long)json_integer_value(dlb_context_get(il, "passes")),
                     (long long)json_integer_value(dlb_context_get(il, "seed")));
        snprintf(r->env[r->n_env++], sizeof r->env[0], "measurement: malloc %s; %s (each "
                 "configuration's controls and system figures are in results.json)",
                 str(ms, "malloc"), order);
    }
    snprintf(r->env[r->n_env++], sizeof r->env[0], "run: %s to %s, %.1f s%s%s",
             str(ctx, "start_utc"), str(ctx, "end_utc"),
             json_number_value(dlb_context_get(ctx, "run_s")),
             json_is_true(dlb_context_get(ctx, "quick")) ? ", --quick" : "",
             json_is_true(dlb_context_get(ctx, "resumed")) ? ", resumed" : "");
}

/* One workload's winner and why: the single-workload form keeps the
 * sentence earlier reports had. */
static void winner(char *out, size_t len, const struct dlb_selection *sel,
                   const struct dlb_sel_group *group, int many)
{
    const char *why = known(group->why);
    if (many) {
        char line[1400];
        dlb_rep_group_winner(line, sizeof line, sel, group);
        snprintf(out, len, "Winner for %s. Why: %s.", line, why);
        return;
    }
    if (!group->winner) {
        snprintf(out, len, "No winner: %s.", why);
        return;
    }
    const struct dlb_sel_config *pc = dlb_selection_config(sel, group->winner);
    char sp[200] = "";
    if (!isnan(pc->speedup))
        snprintf(sp, sizeof sp, " It runs at %.3gx the baseline (%s), 95%% CI "
                 "[%.3g, %.3g].", pc->speedup, known(group->baseline),
                 dlb_rep_or0(pc->speedup_ci_lo), dlb_rep_or0(pc->speedup_ci_hi));
    const char *doubt = group->winner_doubtful_why ? group->winner_doubtful_why
                                                   : pc->doubtful_why;
    char dn[600] = "";
    if (doubt)
        snprintf(dn, sizeof dn, " Doubtful: %s; re-measure on a quiet machine.", doubt);
    snprintf(out, len, "Winner: %s (objective: %s). Why: %s.%s%s",
             group->winner, known(sel->objective), why, sp, dn);
}

static int winners(struct dlb_rep *r, const struct dlb_selection *sel)
{
    size_t n = sel->n_groups;
    r->winner = calloc(n + 1, sizeof *r->winner);
    if (!r->winner)
        return -1;
    if (!n) { /* a selection without groups: none could be made */
        snprintf(r->winner[r->n_winner++], 1600, "No winner: %s.", known(sel->why));
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        winner(r->winner[r->n_winner++], 1600, sel, &sel->groups[i], n > 1);
    return 0;
}

static int verdicts(struct dlb_rep *r, const struct dlb_selection *sel)
{
    size_t i, j, n = 0;
    for (i = 0; i < sel->n_verdicts; i++)
        n += 1 + sel->verdicts[i].n_rows;
    r->verdicts = calloc(n + 1, sizeof *r->verdicts);
    if (!r->verdicts)
        return -1;
    for (i = 0; i < sel->n_verdicts; i++) {
        const struct dlb_sel_verdict *v = &sel->verdicts[i];
        struct dlb_rep_line *l = &r->verdicts[r->n_verdicts++];
        snprintf(l->text, sizeof l->text, "%s: %s%s", known(v->setting),
                 known(v->summary), v->doubtful_why ? " (doubtful: see below)" : "");
        if (!strcmp(known(v->verdict), "not measured"))
            continue;
        for (j = 0; j < v->n_rows; j++) {
            l = &r->verdicts[r->n_verdicts++];
            l->level = 1;
            dlb_rep_verdict_row(l->text, sizeof l->text, &v->rows[j]);
        }
    }
    return 0;
}

/* A configuration measured again because an earlier run was doubtful
 * (remeasure.h): which runs were, and which one's figures stand. */
static void remeasured(struct dlb_rep *r, const struct dlb_record *rec)
{
    json_t *h = json_object_get(rec->json, "remeasured");
    json_t *d = json_object_get(h, "doubtful"), *v;
    if (!json_is_object(h))
        return;
    char *note = r->notes[r->n_notes++];
    size_t used = (size_t)snprintf(note, 400, "re-measured: %s ran %lld times; "
                                   "the figures are attempt %lld's%s; doubtful:",
                                   rec->id,
                                   (long long)json_integer_value(json_object_get(h, "runs")),
                                   (long long)json_integer_value(
                                       json_object_get(h, "kept_attempt")),
                                   rec->system.doubtful ? " (the least disturbed, "
                                                          "still doubtful)" : "");
    size_t i;
    json_array_foreach(d, i, v)
        if (used < 390)
            used += (size_t)snprintf(note + used, 400 - used, "%s attempt %lld: %s",
                                     i ? ";" : "",
                                     (long long)json_integer_value(json_object_get(v, "attempt")),
                                     json_string_value(json_object_get(v, "why")));
}

/* A configuration whose measurement the machine disturbed (sysmeter.h). */
static void doubtful(struct dlb_rep *r, const struct dlb_record *recs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct dlb_rec_system *sys = &recs[i].system;
        remeasured(r, &recs[i]);
        if (sys->doubtful)
            snprintf(r->notes[r->n_notes++], 400, "doubtful: %s: %s during its "
                     "measurement (%.2g involuntary context switches and %.3g page "
                     "faults a step); measure it again on a quiet machine", recs[i].id,
                     sys->doubtful, dlb_rep_or0(sys->involuntary_switches),
                     dlb_rep_or0(sys->minor_faults));
    }
}

static void notes(struct dlb_rep *r, const struct dlb_selection *sel,
                  const struct dlb_record *records, size_t n_records)
{
    r->notes = calloc(sel->n_violations + sel->n_attribution + 2 * n_records + 2,
                      sizeof *r->notes);
    if (!r->notes)
        return;
    if (sel->ties.n) {
        char *note = r->notes[r->n_notes];
        size_t used = (size_t)snprintf(note, 400, "tied with the best "
                                       "(not significantly different):");
        for (size_t i = 0; i < sel->ties.n; i++)
            if (used < 390)
                used += (size_t)snprintf(note + used, 400 - used, " %s%s",
                                         sel->ties.id[i],
                                         i + 1 < sel->ties.n ? ";" : "");
        r->n_notes++;
    }
    for (size_t i = 0; i < sel->n_violations; i++) {
        const struct dlb_sel_violation *v = &sel->violations[i];
        const char *what = known(v->constraint);
        double val = dlb_rep_or0(v->value), lim = dlb_rep_or0(v->limit);
        char a[64], b[64];
        if (!strcmp(what, "memory_budget")) {
            dlb_rep_bytes(a, sizeof a, val);
            dlb_rep_bytes(b, sizeof b, lim);
        } else {
            snprintf(a, sizeof a, "%.2f", val);
            snprintf(b, sizeof b, "%.2f", lim);
        }
        if (!strcmp(what, "target_accuracy"))
            snprintf(r->notes[r->n_notes++], 400, "violation: %s: accuracy "
                     "%s%% below target_accuracy %s%%", known(v->id), a, b);
        else
            snprintf(r->notes[r->n_notes++], 400, "violation: %s: %s %s > %s",
                     known(v->id), what, a, b);
    }
    for (size_t i = 0; i < sel->n_attribution; i++) {
        const struct dlb_sel_attribution *v = &sel->attribution[i];
        char alone[64] = "not measured", win[64] = "no winner";
        if (!isnan(v->speedup_alone))
            snprintf(alone, sizeof alone, "%.3gx (%s)", v->speedup_alone, known(v->alone));
        if (!isnan(v->speedup_winner))
            snprintf(win, sizeof win, "%.3gx", v->speedup_winner);
        const char *wl = v->workload;
        snprintf(r->notes[r->n_notes++], 400, "attribution%s%s: %s alone %s; the "
                 "winning combination %s, %s", wl && wl[0] ? " on " : "",
                 wl && wl[0] ? wl : "", known(v->plugin), alone, win,
                 v->in_winner == 1 ? "with it" : "without it");
    }
    doubtful(r, records, n_records);
}

int dlb_rep_build(struct dlb_rep *r, json_t *context,
                  const struct dlb_record *records, size_t n_records,
                  const struct dlb_selection *selection)
{
    memset(r, 0, sizeof *r);
    environment(r, context);
    if (winners(r, selection) || verdicts(r, selection))
        return -1;
    r->pareto = calloc(selection->pareto.n + 1, sizeof *r->pareto);
    if (!r->pareto || dlb_rep_rows(r, records, n_records, selection))
        return -1;
    /* per workload: a front is among one workload's configurations */
    size_t n_groups = selection->n_groups;
    for (size_t i = 0; i < n_groups; i++) {
        const struct dlb_sel_group *g = &selection->groups[i];
        const char *wl = n_groups > 1 ? known(g->workload) : NULL;
        for (size_t j = 0; j < g->pareto.n && r->n_pareto < selection->pareto.n; j++) {
            /* after the workload, what the configuration sets beyond it */
            char *e = r->pareto[r->n_pareto++];
            int k = wl ? snprintf(e, 256, "%s: ", wl) : 0;
            if (k >= 0 && k < 256)
                dlb_words_not_in(e + k, 256 - (size_t)k, g->pareto.id[j], wl);
        }
    }
    notes(r, selection, records, n_records);
    if (dlb_rep_scenarios(r, records, n_records) ||
        dlb_rep_profile(r, records, n_records))
        return -1;
    return r->notes ? 0 : -1;
}

void dlb_rep_free(struct dlb_rep *r)
{
    free(r->rows);
    free(r->winner);
    free(r->verdicts);
    free(r->notes);
    free(r->pareto);
    free(r->scenarios);
    free(r->profile);
}
