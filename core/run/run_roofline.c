#include "run/run_roofline.h"

#include <stdio.h>
#include <string.h>

#include "plan/plan_workloads.h"
#include "results/results.h"
#include "util/path.h"

/* DIR/peak.json of a run being resumed: its shares stay against the probe
 * the run started with. 0 when there is none or it cannot be read. */
static int read_kept(const char *dir, struct dlb_run_roofline *out)
{
    char *path = dlb_path_join(dir, DLB_RUN_PEAK_FILE);
    json_error_t jerr;
    json_t *j = path ? json_load_file(path, 0, &jerr) : NULL;
    struct dlb_error err = {""};
    if (j && dlb_peak_choice_figures(j, &out->choice.peak, &err) == DLB_OK) {
        free(path);
        out->json = j;
        out->have = 1;
        return 1;
    }
    if (j)
        fprintf(stderr, "dlbench: warning: %s: %s; choosing the roofline "
                "again\n", path, err.msg);
    json_decref(j);
    free(path);
    return 0;
}

void dlb_run_roofline_choose(const struct dlb_session *ses,
                             const char *resume_dir,
                             struct dlb_run_roofline *out)
{
    const struct dlb_plan *p = &ses->plan;
    const struct dlb_config *c = &p->configs[0];
    memset(out, 0, sizeof *out);
    if (!dlb_is_builtin_workload(dlb_config_core(p, c, "workload")->s))
        return;
    if (resume_dir && read_kept(resume_dir, out))
        return;
    struct dlb_peak_policy pol = {
        .max_age_s = dlb_config_core(p, c, "peak_max_age")->f,
        .tolerance = dlb_config_core(p, c, "peak_tolerance")->f,
    };
    struct dlb_error warn = {""}, err = {""};
    int threads = (int)dlb_config_core(p, c, "threads")->i;
    if (dlb_peak_for_run(threads, &pol, NULL, &out->choice, &warn, &err) != DLB_OK) {
        fprintf(stderr, "dlbench: warning: no roofline figures: %s\n", err.msg);
        return;
    }
    if (warn.msg[0])
        fprintf(stderr, "dlbench: warning: %s\n", warn.msg);
    out->json = dlb_peak_choice_json(&out->choice);
    out->have = out->json != NULL;
    if (out->have)
        fprintf(stderr, "dlbench: roofline: fp32 %.0f GFLOP/s (%d threads), %s\n",
                out->choice.peak.fp32_gflops, out->choice.peak.threads,
                out->choice.why);
}

dlb_status dlb_run_roofline_write(const char *dir,
                                  const struct dlb_run_roofline *rf,
                                  struct dlb_error *err)
{
    if (!rf->have)
        return DLB_OK;
    return dlb_rundir_write_json(dir, DLB_RUN_PEAK_FILE, rf->json, err);
}

void dlb_run_roofline_free(struct dlb_run_roofline *rf)
{
    json_decref(rf->json);
    rf->json = NULL;
    rf->have = 0;
}
