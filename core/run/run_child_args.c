/* The command line of a configuration's child process: `dlbench __child`
 * with the run's suite copy, the configuration's index, the user's --set
 * options and the round's share of the budget. */
#include "run/run_child_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* `--set` options giving a search round its share of the budget: keys
 * that are axes keep theirs, as a --set would collapse the axis and
 * renumber the plan. */
void dlb_child_round_sets(const struct dlb_plan *p, const struct dlb_config *c,
                          const struct dlb_round_budget *rd, int rep,
                          char sets[DLB_ROUND_SETS][64])
{
    double scale = rd->scale;
    for (size_t i = 0; i < DLB_ROUND_SETS; i++)
        sets[i][0] = '\0';
    const struct dlb_suite *s = p->suite;
    int swept_cap = 0, swept_steps = 0, swept_warmup = 0, swept_only = 0;
    int swept_acc = 0;
    char key[256];
    for (size_t a = 0; a < s->n_axes; a++) {
        dlb_suite_key_name(s, s->axes[a].ref, key, sizeof key);
        swept_cap |= !strcmp(key, "time_cap");
        swept_steps |= !strcmp(key, "train_steps") ||
                       !strcmp(key, "train_samples");
        swept_warmup |= !strcmp(key, "warmup");
        swept_only |= !strcmp(key, "measure_only");
        swept_acc |= !strcmp(key, "screen_accuracy");
    }
    /* Repetitions after the first measure speed alone: the first one's
     * quality figures stand for the configuration (repeat.h). */
    if (rep > 0 && !swept_only)
        snprintf(sets[3], 64, "measure_only=on");
    if (scale >= 1)
        return;
    /* The least warm-up still runs until the step time settles
     * (measure.c): a cut one only drops the fixed minimum. */
    if (!swept_warmup)
        snprintf(sets[2], 64, "warmup=%.9gs",
                 dlb_config_core(p, c, "warmup")->f * scale);
    long long steps = (long long)dlb_config_core(p, c, "train_steps")->i;
    if (!swept_cap)
        snprintf(sets[0], 64, "time_cap=%.9gs",
                 dlb_config_core(p, c, "time_cap")->f * scale);
    /* Screening for speed: no training run (in mode = infer train_steps
     * names the reference weights, which must stay the same). */
    /* A budget in images (train_samples, plan_budget.h) is cut as one. */
    long long images = (long long)dlb_config_core(p, c,
                                                  "train_samples")->i;
    const char *budget = images > 0 ? "train_samples" : "train_steps";
    long long amount = images > 0 ? images : steps;
    if (!swept_steps && steps > 0 && rd->measure_only &&
        !strcmp(dlb_config_core(p, c, "mode")->s, "train"))
        snprintf(sets[1], 64, "%s=0", budget);
    else if (!swept_steps && steps > 0 && !rd->measure_only)
        snprintf(sets[1], 64, "%s=%lld", budget,
                 (long long)(amount * scale) > 0 ? (long long)(amount * scale) : 1LL);
    /* Plugins' work for quality figures alone (prune's fine-tuning of
     * 937 steps) would otherwise cost a screening round the grid's time. */
    if (!swept_only && rd->measure_only)
        snprintf(sets[3], 64, "measure_only=on");
    /* The first repetition's accuracy stands for the configuration. */
    if (!swept_acc && rd->measure_only && rd->accuracy && rep == 0)
        snprintf(sets[4], 64, "screen_accuracy=on");
}

char **dlb_child_argv(const struct dlb_child_cmd *r, const struct dlb_config *c,
                      char idx[32], char sets[DLB_ROUND_SETS][64])
{
    const struct dlb_options *o = r->opts;
    size_t n = 0, cap = 18 + 2 * (DLB_ROUND_SETS + o->n_sets + o->n_plugin_dirs);
    char **av = calloc(1, cap * sizeof *av + 16);
    if (!av)
        return NULL;
    snprintf(idx, 32, "%zu", c->index);
    av[n++] = "dlbench";
    av[n++] = "__child";
    av[n++] = "--suite";
    av[n++] = (char *)r->suite_copy; /* argv is char *const[], never written */
    av[n++] = "--config-index";
    av[n++] = idx;
    av[n++] = "--record-fd";
    av[n++] = "%FD%";
    if (r->origin) {
        av[n++] = "--origin";
        av[n++] = (char *)r->origin;
    }
    if (r->peak_file) {
        av[n++] = "--peak-file";
        av[n++] = (char *)r->peak_file;
    }
    if (r->seed_rep > 0) {
        /* the number's text lives after the array, in the same block */
        char *num = (char *)(av + cap);
        snprintf(num, 16, "%d", r->seed_rep);
        av[n++] = "--seed-rep";
        av[n++] = num;
    }
    if (o->quick)
        av[n++] = "--quick";
    if (o->verbose)
        av[n++] = "--verbose";
    for (size_t i = 0; i < o->n_sets; i++) {
        av[n++] = "--set";
        av[n++] = o->sets[i];
    }
    for (size_t i = 0; i < DLB_ROUND_SETS; i++)
        if (sets[i][0]) {
            av[n++] = "--set";
            av[n++] = sets[i];
        }
    for (size_t i = 0; i < o->n_plugin_dirs; i++) {
        av[n++] = "--plugin-dir";
        av[n++] = (char *)o->plugin_dirs[i];
    }
    return av;
}

