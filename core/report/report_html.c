/* report.html: the same content as report.md in one self-contained file:
 * basic CSS, the plots' SVG inlined. Every string from a suite or a record
 * is escaped. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "report/report_impl.h"
#include "util/path.h"

static const char css[] =
    "body{font-family:sans-serif;max-width:80em;margin:1em auto;padding:0 1em}"
    "table{border-collapse:collapse;font-size:90%}"
    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
    "td:nth-child(2),td:nth-child(3),td:nth-child(9),th:nth-child(2),"
    "th:nth-child(3),th:nth-child(9){text-align:left}"
    "tr.winner{background:#dfd;font-weight:bold}tr.tied{background:#eef}"
    "tr.violates{background:#fdd}.plot svg{max-width:100%;height:auto}"
    "tr.workload th{text-align:left;background:#f4f4f4}";

static void esc(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
}

/* Copy an SVG file without its XML declaration and doctype, which may not
 * appear inside HTML. */
static void inline_svg(FILE *f, const char *dir, const char *rel)
{
    char *path = dlb_path_join(dir, rel);
    FILE *in = path ? fopen(path, "r") : NULL;
    free(path);
    if (!in) {
        fputs("<p>(plot not drawn)</p>", f);
        return;
    }
    char line[4096];
    int started = 0;
    while (fgets(line, sizeof line, in)) {
        if (!started && !strstr(line, "<svg"))
            continue;
        started = 1;
        fputs(line, f);
    }
    fclose(in);
}

static void rows(FILE *f, const struct dlb_rep *r)
{
    fputs("<table><tr>", f);
    for (int c = 0; c < DLB_REP_COLS; c++) {
        fputs("<th>", f);
        esc(f, dlb_rep_heads[c]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (size_t k = 0; k < r->n_rows; k++) {
        const struct dlb_rep_row *w = &r->rows[k];
        if (w->head) {
            fprintf(f, "<tr class=\"workload\"><th colspan=\"%d\">", DLB_REP_COLS);
            esc(f, w->cell[1]);
            fputs("</th></tr>\n", f);
            continue;
        }
        fprintf(f, "<tr class=\"%s\">", w->winner ? "winner" : w->violates ? "violates"
                                        : w->tied ? "tied" : "");
        for (int c = 0; c < DLB_REP_COLS; c++) {
            fputs("<td>", f);
            esc(f, w->cell[c]);
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* Lines of two levels as a list, each level-1 line nested in the item
 * of the level-0 line before it. */
static void nested(FILE *f, const struct dlb_rep_line *l, size_t n)
{
    fputs("<ul>", f);
    for (size_t k = 0; k < n; k++) {
        int nest = l[k].level;
        int next = k + 1 < n ? l[k + 1].level : 0;
        if (nest && k && !l[k - 1].level)
            fputs("<ul>", f);
        fputs("<li>", f);
        esc(f, l[k].text);
        if (!nest && next)
            continue; /* the lines under it nest inside this item */
        fputs("</li>", f);
        if (nest && !next)
            fputs("</ul></li>", f);
    }
    fputs("</ul>\n", f);
}

dlb_status dlb_report_html(FILE *f, const struct dlb_rep *r,
                           const struct dlb_plot_list *plots, const char *dir)
{
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", f);
    esc(f, r->title);
    fprintf(f, "</title><style>%s</style></head><body>\n<h1>", css);
    esc(f, r->title);
    fputs("</h1>\n", f);
    if (r->n_verdicts) {
        fputs("<h2>Verdicts</h2>\n<p>Each setting against its workload's "
              "baseline: the speedup with its 95% CI, the accuracy change with "
              "its 95% CI, the peak memory change.</p>\n", f);
        nested(f, r->verdicts, r->n_verdicts);
        fputs("<h2>Winners</h2>\n", f);
    }
    for (size_t k = 0; k < r->n_winner; k++) {
        fputs("<p><strong>", f);
        esc(f, r->winner[k]);
        fputs("</strong></p>\n", f);
    }
    fputs("<ul>", f);
    for (size_t k = 0; k < r->n_notes; k++) {
        fputs("<li>", f);
        esc(f, r->notes[k]);
        fputs("</li>", f);
    }
    fputs("</ul>\n", f);
    if (r->n_scenarios) {
        fputs("<h2>Inference scenarios</h2>\n<p>" DLB_REP_SCENARIO_INTRO
              "</p>\n", f);
        nested(f, r->scenarios, r->n_scenarios);
    }
    if (r->n_profile) {
        fputs("<h2>Where the time goes</h2>\n<p>" DLB_REP_PROFILE_INTRO
              "</p>\n", f);
        nested(f, r->profile, r->n_profile);
    }
    fputs("<h2>Configurations</h2>\n", f);
    rows(f, r);
    if (r->n_pareto) {
        fputs("<p>Pareto front of throughput, accuracy and peak memory (no other "
              "configuration is at least as good in all three and better in one):</p>\n<ul>", f);
        for (size_t k = 0; k < r->n_pareto; k++) {
            fputs("<li>", f);
            esc(f, r->pareto[k]);
            fputs("</li>", f);
        }
        fputs("</ul>\n", f);
    }
    for (size_t i = 0; i < plots->n; i++) {
        const char *svg = plots->v[i].svg, *title = plots->v[i].title;
        if (!svg)
            continue;
        fputs(i ? "<h3>" : "<h2>Plots</h2>\n<h3>", f);
        esc(f, title ? title : svg);
        fputs("</h3><div class=\"plot\">\n", f);
        inline_svg(f, dir, svg);
        fputs("</div>\n", f);
    }
    fputs("<h2>Environment</h2>\n<ul>", f);
    for (int k = 0; k < r->n_env; k++) {
        fputs("<li>", f);
        esc(f, r->env[k]);
        fputs("</li>", f);
    }
    fputs("</ul>\n</body></html>\n", f);
    return ferror(f) ? DLB_ERR_IO : DLB_OK;
}
