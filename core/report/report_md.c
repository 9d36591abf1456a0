/* report.md: the content of report_build.c as Markdown; the plots as
 * relative links to their PNGs. */
#include <string.h>

#include "report/report_impl.h"

/* Characters Markdown would read as markup, or that end a table cell. */
static void put(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (strchr("\\|*_<>[]`#", *s))
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
}

/* A section of two-level lines under its heading and intro; nothing
 * when there are none. */
static void section(FILE *f, const char *head, const struct dlb_rep_line *l,
                    size_t n)
{
    if (n)
        fputs(head, f);
    for (size_t k = 0; k < n; k++) {
        fputs(l[k].level ? "    - " : "- ", f);
        put(f, l[k].text);
        fputs(k + 1 == n ? "\n\n" : "\n", f);
    }
}

dlb_status dlb_report_md(FILE *f, const struct dlb_rep *r,
                         const struct dlb_plot_list *plots)
{
    fputs("# ", f);
    put(f, r->title);
    fputs("\n\n", f);
    if (r->n_verdicts)
        fputs("## Verdicts\n\nEach setting against its workload's baseline: the "
              "speedup with its 95% CI, the accuracy change with its 95% CI, the "
              "peak memory change.\n\n", f);
    for (size_t k = 0; k < r->n_verdicts; k++) {
        fputs(r->verdicts[k].level ? "    - " : "- ", f);
        put(f, r->verdicts[k].text);
        fputc('\n', f);
    }
    fputs(r->n_verdicts ? "\n## Winners\n\n" : "", f);
    for (size_t k = 0; k < r->n_winner; k++) {
        fputs("**", f);
        put(f, r->winner[k]);
        fputs("**\n\n", f);
    }
    for (size_t k = 0; k < r->n_notes; k++) {
        fputs("- ", f);
        put(f, r->notes[k]);
        fputc('\n', f);
    }
    if (r->n_notes)
        fputc('\n', f);
    section(f, "## Inference scenarios\n\n" DLB_REP_SCENARIO_INTRO "\n\n",
            r->scenarios, r->n_scenarios);
    section(f, "## Where the time goes\n\n" DLB_REP_PROFILE_INTRO "\n\n",
            r->profile, r->n_profile);
    fputs("## Configurations\n\n|", f);
    for (int c = 0; c < DLB_REP_COLS; c++) {
        fputc(' ', f);
        put(f, dlb_rep_heads[c]);
        fputs(" |", f);
    }
    fputs("\n|", f);
    for (int c = 0; c < DLB_REP_COLS; c++)
        fputs(c == 1 || c == 2 || c == 8 ? " --- |" : " ---: |", f);
    fputc('\n', f);
    for (size_t k = 0; k < r->n_rows; k++) {
        fputc('|', f);
        /* a workload's head row: in italics, beside an empty # */
        int em = r->rows[k].winner || r->rows[k].head;
        const char *mark = r->rows[k].head ? "*" : "**";
        for (int c = 0; c < DLB_REP_COLS; c++) {
            const char *m = em && c == 1 ? mark : "";
            fprintf(f, " %s", m);
            put(f, r->rows[k].cell[c]);
            fprintf(f, "%s |", m);
        }
        fputc('\n', f);
    }
    if (r->n_pareto) {
        fputs("\nPareto front of throughput, accuracy and peak memory (no other "
              "configuration is at least as good in all three and better in one):\n\n", f);
        for (size_t k = 0; k < r->n_pareto; k++) {
            fputs("- ", f);
            put(f, r->pareto[k]);
            fputc('\n', f);
        }
    }
    for (size_t i = 0; i < plots->n; i++) {
        const char *png = plots->v[i].png, *title = plots->v[i].title;
        if (!png)
            continue;
        fputs(i ? "\n" : "\n## Plots\n\n", f);
        fputs("![", f);
        put(f, title ? title : png);
        /* a relative path from the plot module: spaces would end the link */
        fprintf(f, "](<%s>)\n", png);
    }
    fputs("\n## Environment\n\n", f);
    for (int k = 0; k < r->n_env; k++) {
        fputs("- ", f);
        put(f, r->env[k]);
        fputc('\n', f);
    }
    return ferror(f) ? DLB_ERR_IO : DLB_OK;
}
