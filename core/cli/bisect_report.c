/* `dlbench bisect`'s result: a document ("dlbench-bisect", version 1),
 * printed as a table, markdown or JSON and kept in OUT/bisect.json. */
#include "cli/bisect_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *verdict_name(enum dlb_pair_verdict v)
{
    return v == DLB_PAIR_SAME ? "same" : v == DLB_PAIR_DIFFERENT ? "different" : "undecided";
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static const char *state_name(const struct dlb_bisect_run *r, long culprit)
{
    if (culprit >= 0)
        return "found";
    if (r->out_of_budget)
        return "out_of_budget";
    switch (r->b->state) {
    case DLB_BISECT_FOUND: return "gradual";
    case DLB_BISECT_NOT_REPRODUCED: return "not_reproduced";
    default: return "undecided";
    }
}

json_t *dlb_bisect_document(const struct dlb_bisect_run *r)
{
    const struct dlb_bisect *b = r->b;
    struct dlb_bisect_pair *pairs = calloc(b->n + 1, sizeof *pairs);
    if (!pairs)
        return NULL;
    long culprit = -1;
    size_t np = dlb_bisect_pairs(b, pairs, &culprit);
    json_t *measured = json_array(), *jp = json_array();
    for (size_t i = 0; i < b->n; i++) {
        const struct dlb_bisect_commit *c = &b->c[i];
        if (!c->measured)
            continue;
        json_t *figs = json_array();
        double sum = 0;
        for (size_t k = 0; k < c->n_fig; k++) {
            json_array_append_new(figs, json_real(c->fig[k]));
            sum += log(c->fig[k]);
        }
        json_array_append_new(measured, json_pack("{s:I, s:s, s:s?, s:s, s:I, s:o, s:o}",
            "index", (json_int_t)i, "commit", c->sha, "subject",
            r->subjects ? r->subjects[i] : NULL, "build", c->built == 1 ? "ok"
            : c->built < 0 ? "failed" : "not built", "runs", (json_int_t)c->n_fig,
            "figure_s", c->n_fig ? json_real(exp(sum / (double)c->n_fig)) : json_null(),
            "figures_s", figs));
    }
    for (size_t k = 0; k < np; k++)
        json_array_append_new(jp, json_pack("{s:I, s:I, s:o, s:[o, o], s:o, s:s}",
            "from", (json_int_t)pairs[k].a, "to", (json_int_t)pairs[k].b,
            "ratio", num_or_null(pairs[k].cmp.ratio), "ratio_ci",
            num_or_null(pairs[k].cmp.lo), num_or_null(pairs[k].cmp.hi),
            "p", num_or_null(pairs[k].cmp.p), "verdict", verdict_name(pairs[k].cmp.verdict)));
    json_t *cul = json_null();
    for (size_t k = 0; culprit >= 0 && k < np; k++)
        if ((long)pairs[k].b == culprit) {
            const struct dlb_pair_cmp *c = &pairs[k].cmp;
            cul = json_pack("{s:I, s:s, s:s?, s:I, s:s, s:I, s:f, s:[f, f], s:f}",
                "index", (json_int_t)culprit, "commit", b->c[culprit].sha, "subject",
                r->subjects ? r->subjects[culprit] : NULL, "parent_index",
                (json_int_t)pairs[k].a, "parent", b->c[pairs[k].a].sha,
                "untested_between", (json_int_t)(pairs[k].b - pairs[k].a - 1),
                "ratio", c->ratio, "ratio_ci", c->lo, c->hi, "p", c->p);
        }
    free(pairs);
    return json_pack("{s:s, s:i, s:s, s:s, s:O, s:s, s:s, s:I, s:s, s:o, s:o, s:o,"
                     " s:I, s:I, s:I, s:f, s:f, s:I, s:I, s:s}",
        "schema", "dlbench-bisect", "schema_version", 1, "repo", r->repo,
        "suite", r->suite, "configs", r->configs ? r->configs : json_array(),
        "good", b->c[0].sha, "bad", b->c[b->n - 1].sha, "commits", (json_int_t)b->n,
        "state", state_name(r, culprit), "culprit", cul, "measured", measured,
        "pairs", jp, "builds", (json_int_t)r->builds, "runs", (json_int_t)r->runs,
        "failed_runs", (json_int_t)r->failed_runs, "seconds", r->seconds,
        "alpha", b->alpha, "runs_min", (json_int_t)b->runs_min,
        "runs_max", (json_int_t)b->runs_max,
        "note", "each pair of neighbouring measured commits is judged on its own; a "
                "pair measured the same is not searched, so a change undone before the "
                "second of them is not looked for");
}

static const char *s_of(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static double n_of(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

void dlb_bisect_print(FILE *f, json_t *doc, enum dlb_hist_format fmt)
{
    if (fmt == DLB_HIST_JSON) {
        json_dumpf(doc, f, JSON_INDENT(2));
        fputc('\n', f);
        return;
    }
    int md = fmt == DLB_HIST_MARKDOWN;
    fprintf(f, md ? "### dlbench bisect\n\n`%.12s` (good) .. `%.12s` (bad): %lld commits "
            "in first-parent order, suite %s, %zu configuration%s\n\n| # | commit | runs | "
            "step time (geometric mean) | subject |\n| ---: | --- | ---: | ---: | --- |\n"
            : "dlbench bisect: %.12s (good) .. %.12s (bad): %lld commits in first-parent "
            "order, suite %s, %zu configuration%s\n  #  commit        runs  step time   "
            "subject\n", s_of(doc, "good"), s_of(doc, "bad"),
            (long long)n_of(doc, "commits"), s_of(doc, "suite"),
            json_array_size(json_object_get(doc, "configs")),
            json_array_size(json_object_get(doc, "configs")) == 1 ? "" : "s");
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(doc, "measured"), i, m)
        fprintf(f, md ? "| %lld | `%.12s` | %lld | %.5g ms | %s |\n"
                      : "  %-2lld %-12.12s  %4lld  %8.5g ms  %s\n",
                (long long)n_of(m, "index"), s_of(m, "commit"), (long long)n_of(m, "runs"),
                1e3 * n_of(m, "figure_s"), !strcmp(s_of(m, "build"), "ok") ? s_of(m, "subject")
                : "(did not build)");
    double looks = n_of(doc, "runs_max") - n_of(doc, "runs_min") + 1;
    fprintf(f, md ? "\n| from | to | ratio | %.4g%% CI | p | verdict |\n| ---: | ---: | "
            "---: | --- | ---: | --- |\n" : "each measured commit against the previous "
            "one measured (step time ratio, %.4g%% CI, Welch's t on the runs' logarithms, "
            "judged at alpha %g / %g looks):\n", 100 * (1 - n_of(doc, "alpha") / looks),
            n_of(doc, "alpha"), looks);
    json_array_foreach(json_object_get(doc, "pairs"), i, m) {
        json_t *ci = json_object_get(m, "ratio_ci");
        fprintf(f, md ? "| %lld | %lld | %.4f | %.4f-%.4f | %.2g | %s |\n"
                      : "  #%-2lld -> #%-2lld  %.4f (%.4f-%.4f)  p %-8.2g  %s\n",
                (long long)n_of(m, "from"), (long long)n_of(m, "to"), n_of(m, "ratio"),
                json_number_value(json_array_get(ci, 0)),
                json_number_value(json_array_get(ci, 1)), n_of(m, "p"), s_of(m, "verdict"));
    }
    json_t *c = json_object_get(doc, "culprit");
    const char *state = s_of(doc, "state");
    fputc('\n', f);
    if (json_is_object(c))
        fprintf(f, "%sfirst slower commit: #%lld %s \"%s\": %.4fx (%.4f-%.4f) against "
                "#%lld %.12s, p %.2g%s%s\n", md ? "**" : "", (long long)n_of(c, "index"),
                s_of(c, "commit"), s_of(c, "subject"), n_of(c, "ratio"),
                json_number_value(json_array_get(json_object_get(c, "ratio_ci"), 0)),
                json_number_value(json_array_get(json_object_get(c, "ratio_ci"), 1)),
                (long long)n_of(c, "parent_index"), s_of(c, "parent"), n_of(c, "p"),
                n_of(c, "untested_between") > 0 ? " (the commits between them did not "
                "build: one of them or this one)" : "", md ? "**" : "");
    else if (!strcmp(state, "not_reproduced"))
        fprintf(f, "not reproduced: %.12s is not slower than %.12s here\n",
                s_of(doc, "bad"), s_of(doc, "good"));
    else if (!strcmp(state, "gradual"))
        fprintf(f, "no single commit: neighbouring measured commits differ by less than "
                "half of the change each; it came in steps\n");
    else
        fprintf(f, "undecided: %s; more runs (--runs-max, --budget) or a quieter machine "
                "may decide it\n", !strcmp(state, "out_of_budget") ? "the budget of runs "
                "ran out" : "a comparison stayed undecided at --runs-max");
    fprintf(f, "%s%lld builds (one per commit measured, each built once or taken from the "
            "build cache), %lld runs (%lld failed), %.0f s\n", md ? "\n" : "",
            (long long)n_of(doc, "builds"), (long long)n_of(doc, "runs"),
            (long long)n_of(doc, "failed_runs"), n_of(doc, "seconds"));
}
