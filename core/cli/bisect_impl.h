/* `dlbench bisect`'s parts (cmd_bisect.c drives them): commands run
 * through sh, git asked about the range, a run's figure read, the report
 * written. */
#ifndef DLB_CORE_BISECT_IMPL_H
#define DLB_CORE_BISECT_IMPL_H

#include <jansson.h>
#include "cli/hist_args.h"
#include "history/bisect.h"

/* Run `sh -c cmd` in `cwd` with the NULL-ended "NAME=VALUE" strings of
 * env added, stdout to out_path and stderr to err_path (NULL: this
 * process's). The command's exit status, 128 + a signal, or -1 when it
 * could not start. */
int dlb_sh(const char *cmd, const char *cwd, const char *const *env,
           const char *out_path, const char *err_path);

/* `git -C repo ARGS...` (NULL-ended), its standard output in a malloc'ed
 * string with the trailing newline cut, or NULL when git failed (its
 * error in err). */
char *dlb_git(const char *repo, const char *const *args, struct dlb_error *err);

/* The commits from GOOD to BAD in first-parent order, GOOD first: a
 * malloc'ed array of malloc'ed full SHAs. GOOD must be an ancestor of
 * BAD; either not a commit of `repo` is DLB_ERR_INPUT saying which. */
dlb_status dlb_bisect_range(const char *repo, const char *good, const char *bad,
                            char ***shas, size_t *n_shas, struct dlb_error *err);

/* The figure of a run: the geometric mean of the median step times of
 * `configs` in DIR/results.json; with n_configs 0, every ok record's,
 * and *chosen gets their ids (a JSON array, new). -1 with why set when a
 * configuration is missing or did not run. */
int dlb_bisect_figure(const char *dir, const char *const *configs, size_t n_configs,
                      json_t **chosen, double *figure, char *why, size_t n_why);

/* Everything the report says. */
struct dlb_bisect_run {
    const struct dlb_bisect *b;
    const char *repo, *suite, *out;
    char **subjects;            /* per commit, NULL where not asked */
    json_t *configs;            /* the ids measured */
    size_t builds, runs, failed_runs;
    double seconds;
    int out_of_budget;
};

json_t *dlb_bisect_document(const struct dlb_bisect_run *r);
void dlb_bisect_print(FILE *f, json_t *doc, enum dlb_hist_format fmt);

#endif
