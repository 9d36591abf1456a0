/* Renderers of a comparison: console table, markdown, JSON. One row
 * formatter feeds both text forms, so they never disagree. */
#include "compare/compare.h"

#include <math.h>
#include <string.h>

struct cells {
    char id[512], base[32], nw[32], ratio[32], ci[48], change[32], p[32];
    const char *verdict;
    char same[48];          /* "same (+-7.2%)": what "same" could not see */
};

static double num(json_t *o, const char *k, int *have)
{
    json_t *v = json_object_get(o, k);
    *have = json_is_number(v);
    return *have ? json_number_value(v) : NAN;
}

static void fill(json_t *row, struct cells *c, int markdown)
{
    int h;
    const char *id = json_string_value(json_object_get(row, "id"));
    size_t j = 0;
    /* Markdown: a '|' would split the cell, a '`' open code. */
    for (const char *s = id ? id : ""; *s && j + 3 < sizeof c->id; s++) {
        if (markdown && (*s == '|' || *s == '`' || *s == '*' || *s == '_' ||
                         *s == '<' || *s == '['))
            c->id[j++] = '\\';
        c->id[j++] = (unsigned char)*s < 0x20 ? ' ' : *s;
    }
    c->id[j] = '\0';
    double v = num(row, "base_median_s", &h);
    snprintf(c->base, sizeof c->base, h ? "%.4g" : "-", v * 1e3);
    v = num(row, "new_median_s", &h);
    snprintf(c->nw, sizeof c->nw, h ? "%.4g" : "-", v * 1e3);
    double r = num(row, "ratio", &h);
    json_t *ci = json_object_get(row, "ratio_ci");
    if (h) {
        snprintf(c->ratio, sizeof c->ratio, "%.3f", r);
        snprintf(c->ci, sizeof c->ci, "[%.3f, %.3f]",
                 json_number_value(json_array_get(ci, 0)),
                 json_number_value(json_array_get(ci, 1)));
        snprintf(c->change, sizeof c->change, "%+.1f%%", (r - 1) * 100);
    } else {
        strcpy(c->ratio, "-");
        strcpy(c->ci, "-");
        strcpy(c->change, "-");
    }
    double p = num(row, "p", &h);
    snprintf(c->p, sizeof c->p, h ? "%.2g" : "-", p);
    c->verdict = json_string_value(json_object_get(row, "verdict"));
    double res = num(row, "resolution", &h);
    if (h && c->verdict && !strcmp(c->verdict, "same")) {
        snprintf(c->same, sizeof c->same, "same (blind below %.1f%%)", res * 100);
        c->verdict = c->same;
    }
    /* The reference is 1 by construction: no interval, no test. */
    if (json_is_true(json_object_get(row, "reference"))) {
        c->verdict = "reference";
        strcpy(c->ci, "-");
        strcpy(c->p, "-");
    }
}

static void summary(FILE *f, json_t *cmp, const char *bold)
{
    json_t *counts = json_object_get(cmp, "counts");
    int h;
    double g = num(cmp, "geomean_ratio", &h);
    fprintf(f, "%s%" JSON_INTEGER_FORMAT " slower, %" JSON_INTEGER_FORMAT
            " faster, %" JSON_INTEGER_FORMAT " same, %" JSON_INTEGER_FORMAT
            " new, %" JSON_INTEGER_FORMAT " missing%s",
            bold, json_integer_value(json_object_get(counts, "slower")),
            json_integer_value(json_object_get(counts, "faster")),
            json_integer_value(json_object_get(counts, "same")),
            json_integer_value(json_object_get(counts, "new")),
            json_integer_value(json_object_get(counts, "missing")), bold);
    if (h)
        fprintf(f, "; geometric mean of the ratios %.3f (%+.1f%%) over %"
                JSON_INTEGER_FORMAT " configurations", g, (g - 1) * 100,
                json_integer_value(json_object_get(cmp, "compared")));
    fputc('\n', f);
    json_t *res = json_object_get(cmp, "resolution");
    if (json_is_object(res))
        fprintf(f, "%sresolution: these runs could detect a change of %.1f%% "
                "(median over configurations; the least sensitive %.1f%%): a smaller "
                "one reads as \"same\"\n", bold[0] ? "\n" : "",
                json_number_value(json_object_get(res, "median")) * 100,
                json_number_value(json_object_get(res, "max")) * 100);
}

/* Whether a row was judged on the processes' medians (repetitions). */
static int any_welch(json_t *cmp)
{
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(cmp, "configs"), i, row) {
        const char *t = json_string_value(json_object_get(row, "test"));
        if (t && !strcmp(t, "welch"))
            return 1;
    }
    return 0;
}

static void legend(FILE *f, json_t *cmp)
{
    const char *norm = json_string_value(json_object_get(cmp, "normalized_by"));
    fprintf(f, "ratio = NEW/BASE median step time (above 1 is slower)%s%s%s; "
            "slower/faster: %s p < %g and a change beyond %g%%\n",
            norm ? ", each run divided by its own '" : "", norm ? norm : "",
            norm ? "' first" : "",
            any_welch(cmp) ? "test (U test on the samples; Welch's t on "
            "ln(process median) where both runs had repetitions)" : "U test",
            json_number_value(json_object_get(cmp, "alpha")),
            json_number_value(json_object_get(cmp, "threshold")) * 100);
}

static void print_table(FILE *f, json_t *cmp)
{
    size_t i, w = 6;
    json_t *row, *v;
    struct cells c;
    fprintf(f, "base: %s\nnew:  %s\n",
            json_string_value(json_object_get(cmp, "base")),
            json_string_value(json_object_get(cmp, "new")));
    json_array_foreach(json_object_get(cmp, "configs"), i, row) {
        fill(row, &c, 0);
        w = strlen(c.id) > w ? strlen(c.id) : w;
    }
    fprintf(f, "%-*s  %9s  %9s  %6s  %-16s  %7s  %7s  %s\n", (int)w, "config",
            "base", "new", "ratio", "95% CI", "change", "p", "verdict");
    fprintf(f, "%-*s  %9s  %9s  %6s  %-16s  %7s  %7s\n", (int)w, "", "ms", "ms",
            "x", "x", "%", "");
    json_array_foreach(json_object_get(cmp, "configs"), i, row) {
        fill(row, &c, 0);
        fprintf(f, "%-*s  %9s  %9s  %6s  %-16s  %7s  %7s  %s", (int)w, c.id,
                c.base, c.nw, c.ratio, c.ci, c.change, c.p, c.verdict);
        const char *note = json_string_value(json_object_get(row, "note"));
        fprintf(f, note ? " (%s)\n" : "\n", note);
    }
    legend(f, cmp);
    summary(f, cmp, "");
    json_array_foreach(json_object_get(cmp, "warnings"), i, v)
        fprintf(f, "warning: %s\n", json_string_value(v));
}

static void print_markdown(FILE *f, json_t *cmp)
{
    size_t i;
    json_t *row, *v;
    struct cells c;
    fputs("### dlbench compare\n\n", f);
    summary(f, cmp, "**");
    fputc('\n', f);
    json_array_foreach(json_object_get(cmp, "warnings"), i, v)
        fprintf(f, "> **warning:** %s\n\n", json_string_value(v));
    fputs("| configuration | base (ms) | new (ms) | ratio | 95% CI | change | p | verdict |\n"
          "| --- | ---: | ---: | ---: | :---: | ---: | ---: | --- |\n", f);
    json_array_foreach(json_object_get(cmp, "configs"), i, row) {
        fill(row, &c, 1);
        int bad = !strcmp(c.verdict, "slower");
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s%s%s |\n", c.id,
                c.base, c.nw, c.ratio, c.ci, c.change, c.p, bad ? "**" : "",
                c.verdict, bad ? "**" : "");
    }
    fputc('\n', f);
    legend(f, cmp);
}

void dlb_compare_print(FILE *f, enum dlb_compare_format fmt, json_t *cmp)
{
    switch (fmt) {
    case DLB_COMPARE_TABLE:
        print_table(f, cmp);
        break;
    case DLB_COMPARE_MARKDOWN:
        print_markdown(f, cmp);
        break;
    case DLB_COMPARE_JSON:
        json_dumpf(cmp, f, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
        fputc('\n', f);
        break;
    }
}
