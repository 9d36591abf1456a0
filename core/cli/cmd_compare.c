/* `dlbench compare BASE NEW`. */
#include "cli/cmd_compare.h"

#include <stdlib.h>

#include "results/comparison.h"

static enum dlb_compare_format format_of(const struct dlb_options *o)
{
    if (o->markdown)
        return DLB_COMPARE_MARKDOWN;
    return o->format == DLB_FORMAT_JSON ? DLB_COMPARE_JSON : DLB_COMPARE_TABLE;
}

int dlb_compare_report(struct dlb_options *opts, json_t *base,
                       const char *base_file, json_t *nw, const char *new_file,
                       int normalize)
{
    struct dlb_compare_opts co = {
        .threshold = opts->threshold >= 0 ? opts->threshold : DLB_COMPARE_THRESHOLD,
        .alpha = DLB_COMPARE_ALPHA,
        .normalize = normalize,
        .accuracy_threshold = DLB_COMPARE_ACCURACY_THRESHOLD,
    };
    struct dlb_error err = {""};
    struct dlb_comparison cmp;
    if (dlb_compare(base, base_file, nw, new_file, &co, &cmp, &err) != DLB_OK) {
        fprintf(stderr, "dlbench: compare: %s\n", err.msg);
        return 2;
    }
    dlb_compare_print(stdout, format_of(opts), &cmp);
    /* The warnings are in the table and markdown; JSON readers see them in
     * "warnings", and a person at a terminal on standard error. */
    if (format_of(opts) == DLB_COMPARE_JSON)
        for (size_t i = 0; i < cmp.n_warnings; i++)
            fprintf(stderr, "dlbench: warning: %s\n", cmp.warnings[i]);
    /* A regression is a slowdown, or an accuracy drop the seeds show. */
    long long bad = cmp.slower + cmp.accuracy_lower;
    dlb_comparison_free(&cmp);
    return bad > 0 ? 1 : 0;
}

int dlb_cmd_compare(struct dlb_options *opts)
{
    if (opts->n_args != 2) {
        fprintf(stderr, "dlbench: compare: expected BASE NEW (two run directories "
                "or results.json files), got %zu argument%s\n", opts->n_args,
                opts->n_args == 1 ? "" : "s");
        return 2;
    }
    struct dlb_error err = {""};
    json_t *base = NULL, *nw = NULL;
    char *bf = NULL, *nf = NULL;
    int rc = 2;
    if (dlb_compare_load(opts->args[0], &base, &bf, &err) != DLB_OK ||
        dlb_compare_load(opts->args[1], &nw, &nf, &err) != DLB_OK)
        fprintf(stderr, "dlbench: compare: %s\n", err.msg);
    else
        rc = dlb_compare_report(opts, base, bf, nw, nf, opts->normalize);
    json_decref(base);
    json_decref(nw);
    free(bf);
    free(nf);
    return rc;
}
