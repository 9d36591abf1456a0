/* Renderers of a comparison: console table, markdown, JSON. One row
 * formatter feeds both text forms, so they never disagree. */
#include "compare/compare.h"
#include "results/comparison.h"
#include "util/figure.h"

#include <math.h>
#include <string.h>

struct cells {
    char id[512], base[32], nw[32], ratio[32], ci[48], change[32], p[32];
    const char *verdict;
    char same[48];          /* "same (+-7.2%)": what "same" could not see */
};

static double or0(double v)
{
    return isnan(v) ? 0 : v;
}

static void fill(const struct dlb_cmp_row *row, struct cells *c, int markdown)
{
    size_t j = 0;
    /* Markdown: a '|' would split the cell, a '`' open code. */
    for (const char *s = row->id ? row->id : ""; *s && j + 3 < sizeof c->id; s++) {
        if (markdown && (*s == '|' || *s == '`' || *s == '*' || *s == '_' ||
                         *s == '<' || *s == '['))
            c->id[j++] = '\\';
        c->id[j++] = (unsigned char)*s < 0x20 ? ' ' : *s;
    }
    c->id[j] = '\0';
    if (isnan(row->base_median_s))
        strcpy(c->base, "-");
    else
        dlb_figure_text(c->base, sizeof c->base, row->base_median_s * 1e3);
    if (isnan(row->new_median_s))
        strcpy(c->nw, "-");
    else
        dlb_figure_text(c->nw, sizeof c->nw, row->new_median_s * 1e3);
    double r = row->ratio;
    if (!isnan(r)) {
        snprintf(c->ratio, sizeof c->ratio, "%.3f", r);
        snprintf(c->ci, sizeof c->ci, "[%.3f, %.3f]", or0(row->ratio_ci_lo),
                 or0(row->ratio_ci_hi));
        snprintf(c->change, sizeof c->change, "%+.1f%%", (r - 1) * 100);
    } else {
        strcpy(c->ratio, "-");
        strcpy(c->ci, "-");
        strcpy(c->change, "-");
    }
    snprintf(c->p, sizeof c->p, !isnan(row->p) ? "%.2g" : "-", row->p);
    c->verdict = row->verdict;
    if (!isnan(row->resolution) && c->verdict && !strcmp(c->verdict, "same")) {
        snprintf(c->same, sizeof c->same, "same (blind below %.1f%%)",
                 row->resolution * 100);
        c->verdict = c->same;
    }
    /* The reference is 1 by construction: no interval, no test. */
    if (row->reference) {
        c->verdict = "reference";
        strcpy(c->ci, "-");
        strcpy(c->p, "-");
    }
}

static void summary(FILE *f, const struct dlb_comparison *cmp, const char *bold)
{
    double g = cmp->geomean_ratio;
    fprintf(f, "%s%lld slower, %lld faster, %lld same, %lld new, %lld missing%s",
            bold, cmp->slower, cmp->faster, cmp->same, cmp->added, cmp->missing, bold);
    if (!isnan(g))
        fprintf(f, "; geometric mean of the ratios %.3f (%+.1f%%) over %lld "
                "configurations", g, (g - 1) * 100, cmp->compared);
    fputc('\n', f);
    if (!isnan(cmp->resolution_median) || !isnan(cmp->resolution_max))
        fprintf(f, "%sresolution: these runs could detect a change of %.1f%% "
                "(median over configurations; the least sensitive %.1f%%): a smaller "
                "one reads as \"same\"\n", bold[0] ? "\n" : "",
                or0(cmp->resolution_median) * 100, or0(cmp->resolution_max) * 100);
}

/* Whether any row carries an accuracy (both runs scored it). */
static int any_accuracy(const struct dlb_comparison *cmp)
{
    for (size_t i = 0; i < cmp->n_rows; i++)
        if (cmp->rows[i].accuracy_verdict)
            return 1;
    return 0;
}

static void accuracy_summary(FILE *f, const struct dlb_comparison *cmp,
                             const char *bold)
{
    if (any_accuracy(cmp))
        fprintf(f, "%saccuracy: %lld lower, %lld higher, %lld same of %lld "
                "judged%s\n", bold, cmp->accuracy_lower, cmp->accuracy_higher,
                cmp->accuracy_judged - cmp->accuracy_lower - cmp->accuracy_higher,
                cmp->accuracy_judged, bold);
}

/* A row's accuracy cells: the two, the change with its interval, the
 * seeds it is over (and whether the images were paired). */
struct acc_cells {
    char base[16], nw[16], change[48], seeds[32];
};

static void fill_accuracy(const struct dlb_cmp_row *r, struct acc_cells *a)
{
    snprintf(a->base, sizeof a->base, "%.2f", r->base_accuracy);
    snprintf(a->nw, sizeof a->nw, "%.2f", r->new_accuracy);
    snprintf(a->change, sizeof a->change, isnan(r->accuracy_ci) ? "%+.2f"
             : "%+.2f +-%.2f", dlb_figure_unsigned_zero(r->accuracy_change, 2),
             r->accuracy_ci);
    snprintf(a->seeds, sizeof a->seeds, "%lld%s", r->accuracy_seeds,
             r->accuracy_images_paired ? "" : " (unpaired images)");
}

static const char accuracy_legend[] =
    "accuracy change = NEW - BASE (points) with its 95%% CI over the seeds "
    "both trained from and the test images (paired image by image); "
    "lower/higher: the interval excludes 0 over 2 seeds or more and the "
    "change is beyond %g points; one seed is not judged (a rebuilt "
    "training moves by its own noise), unless every prediction is alike\n";

static void print_accuracy_table(FILE *f, const struct dlb_comparison *cmp, size_t w)
{
    if (!any_accuracy(cmp))
        return;
    struct cells c;
    struct acc_cells a;
    fprintf(f, "\n%-*s  %7s  %7s  %-16s  %-6s  %s\n", (int)w, "accuracy", "base",
            "new", "change", "seeds", "verdict");
    fprintf(f, "%-*s  %7s  %7s  %-16s\n", (int)w, "", "%", "%", "points");
    for (size_t i = 0; i < cmp->n_rows; i++) {
        const struct dlb_cmp_row *r = &cmp->rows[i];
        if (!r->accuracy_verdict)
            continue;
        fill(r, &c, 0);
        fill_accuracy(r, &a);
        fprintf(f, "%-*s  %7s  %7s  %-16s  %-6s  %s\n", (int)w, c.id, a.base, a.nw,
                a.change, a.seeds, r->accuracy_verdict);
    }
    fprintf(f, accuracy_legend, cmp->accuracy_threshold);
}

static void print_accuracy_markdown(FILE *f, const struct dlb_comparison *cmp)
{
    if (!any_accuracy(cmp))
        return;
    struct cells c;
    struct acc_cells a;
    fputs("\n| configuration | base accuracy (%) | new accuracy (%) | change "
          "(points, 95% CI) | seeds | accuracy |\n"
          "| --- | ---: | ---: | ---: | ---: | --- |\n", f);
    for (size_t i = 0; i < cmp->n_rows; i++) {
        const struct dlb_cmp_row *r = &cmp->rows[i];
        if (!r->accuracy_verdict)
            continue;
        fill(r, &c, 1);
        fill_accuracy(r, &a);
        int bad = !strcmp(r->accuracy_verdict, "lower");
        fprintf(f, "| %s | %s | %s | %s | %s | %s%s%s |\n", c.id, a.base, a.nw,
                a.change, a.seeds, bad ? "**" : "", r->accuracy_verdict,
                bad ? "**" : "");
    }
    fputc('\n', f);
    fprintf(f, accuracy_legend, cmp->accuracy_threshold);
}

/* Whether a row was judged on the processes' medians (repetitions). */
static int any_welch(const struct dlb_comparison *cmp)
{
    for (size_t i = 0; i < cmp->n_rows; i++)
        if (cmp->rows[i].test && !strcmp(cmp->rows[i].test, "welch"))
            return 1;
    return 0;
}

static void legend(FILE *f, const struct dlb_comparison *cmp)
{
    const char *norm = cmp->normalized_by;
    fprintf(f, "ratio = NEW/BASE median step time (above 1 is slower)%s%s%s; "
            "slower/faster: %s p < %g and a change beyond %g%%\n",
            norm ? ", each run divided by its own '" : "", norm ? norm : "",
            norm ? "' first" : "",
            any_welch(cmp) ? "test (U test on the samples; Welch's t on "
            "ln(process median) where both runs had repetitions)" : "U test",
            or0(cmp->alpha), or0(cmp->threshold) * 100);
}

static void print_table(FILE *f, const struct dlb_comparison *cmp)
{
    size_t i, w = 6;
    struct cells c;
    fprintf(f, "base: %s\nnew:  %s\n", cmp->base, cmp->new_file);
    for (i = 0; i < cmp->n_rows; i++) {
        fill(&cmp->rows[i], &c, 0);
        w = strlen(c.id) > w ? strlen(c.id) : w;
    }
    fprintf(f, "%-*s  %9s  %9s  %6s  %-16s  %7s  %7s  %s\n", (int)w, "config",
            "base", "new", "ratio", "95% CI", "change", "p", "verdict");
    fprintf(f, "%-*s  %9s  %9s  %6s  %-16s  %7s  %7s\n", (int)w, "", "ms", "ms",
            "x", "x", "%", "");
    for (i = 0; i < cmp->n_rows; i++) {
        fill(&cmp->rows[i], &c, 0);
        fprintf(f, "%-*s  %9s  %9s  %6s  %-16s  %7s  %7s  %s", (int)w, c.id,
                c.base, c.nw, c.ratio, c.ci, c.change, c.p, c.verdict);
        const char *note = cmp->rows[i].note;
        fprintf(f, note ? " (%s)\n" : "\n", note);
    }
    legend(f, cmp);
    print_accuracy_table(f, cmp, w);
    summary(f, cmp, "");
    accuracy_summary(f, cmp, "");
    for (i = 0; i < cmp->n_warnings; i++)
        fprintf(f, "warning: %s\n", cmp->warnings[i]);
}

static void print_markdown(FILE *f, const struct dlb_comparison *cmp)
{
    size_t i;
    struct cells c;
    fputs("### dlbench compare\n\n", f);
    summary(f, cmp, "**");
    if (any_accuracy(cmp)) {
        fputc('\n', f);
        accuracy_summary(f, cmp, "**");
    }
    fputc('\n', f);
    for (i = 0; i < cmp->n_warnings; i++)
        fprintf(f, "> **warning:** %s\n\n", cmp->warnings[i]);
    fputs("| configuration | base (ms) | new (ms) | ratio | 95% CI | change | p | verdict |\n"
          "| --- | ---: | ---: | ---: | :---: | ---: | ---: | --- |\n", f);
    for (i = 0; i < cmp->n_rows; i++) {
        fill(&cmp->rows[i], &c, 1);
        int bad = !strcmp(c.verdict, "slower");
        const char *dw = cmp->rows[i].doubtful_why;
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s%s%s%s%s%s |\n", c.id,
                c.base, c.nw, c.ratio, c.ci, c.change, c.p, bad ? "**" : "",
                c.verdict, bad ? "**" : "", dw ? " (doubtful: " : "", dw ? dw : "",
                dw ? ")" : "");
    }
    fputc('\n', f);
    legend(f, cmp);
    print_accuracy_markdown(f, cmp);
}

void dlb_compare_print(FILE *f, enum dlb_compare_format fmt,
                       const struct dlb_comparison *cmp)
{
    json_t *doc;
    switch (fmt) {
    case DLB_COMPARE_TABLE:
        print_table(f, cmp);
        break;
    case DLB_COMPARE_MARKDOWN:
        print_markdown(f, cmp);
        break;
    case DLB_COMPARE_JSON:
        doc = dlb_comparison_write(cmp);
        if (!doc) {
            fprintf(f, "out of memory writing the comparison\n");
            return;
        }
        json_dumpf(doc, f, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
        fputc('\n', f);
        json_decref(doc);
        break;
    }
}
