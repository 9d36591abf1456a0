/* dlb_run_check_data: the data sets of a run, read once in the parent. */
#define _POSIX_C_SOURCE 200809L

#include "run/run_check.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/dataset.h"
#include "model/model_file.h"
#include "model/model_find.h"
#include "plan/plan_workloads.h"
#include "plan/session.h"

/* Does any file of the split exist in `dir`? If none does, "auto" makes
 * synthetic data and there is nothing to check. */
static int split_present(const char *dir, int train)
{
    static const char *const names[] = {"%s/%s-images-idx3-ubyte%s",
                                        "%s/%s-labels-idx1-ubyte%s"};
    for (size_t k = 0; k < 2; k++)
        for (int gz = 0; gz < 2; gz++) {
            char path[4096];
            struct stat st;
            snprintf(path, sizeof path, names[k], dir, train ? "train" : "t10k",
                     gz ? ".gz" : "");
            if (stat(path, &st) == 0)
                return 1;
        }
    return 0;
}

/* The files must fit the model (padded when smaller: dlb_dataset_fit);
 * under "auto" a pair that does not fit makes synthetic data instead, which
 * the child says. */
static dlb_status check_split(const char *mode, const char *dir, int train,
                              const struct dlb_model_spec *m, struct dlb_error *err)
{
    if (!strcmp(mode, "auto") && !split_present(dir, train))
        return DLB_OK;
    struct dlb_dataset d;
    struct dlb_error fit_err = {""};
    const struct dlb_data_want want = {m->in_c, m->in_h, m->in_w, m->classes};
    int pad = 0;
    /* An image folder is listed and sampled at the model's shape: its
     * layout, classes and decoding are checked here, once. */
    dlb_status st = !strncmp(mode, DLB_DATASET_FOLDER_PREFIX,
                             strlen(DLB_DATASET_FOLDER_PREFIX))
        ? dlb_dataset_open_for(mode, dir, train, 0, &want, &d, NULL, 0, err)
        : dlb_dataset_open(mode, dir, train, 0, &d, NULL, err);
    if (st != DLB_OK)
        return st;
    if (!d.synthetic && strcmp(mode, "auto") != 0 &&
        dlb_dataset_fit(&d, &want, &pad, &fit_err) != DLB_OK)
        st = dlb_errorf(err, DLB_ERR_INPUT, "%s: %s", m->path, fit_err.msg);
    dlb_dataset_free(&d);
    return st;
}

dlb_status dlb_run_check_data(const struct dlb_plan *p,
                              const char *const *suite_paths,
                              size_t n_suite_paths, struct dlb_error *err)
{
    if (!p->n || !dlb_is_builtin_workload(p->configs[0].core.workload))
        return DLB_OK;
    for (size_t i = 0; i < p->n; i++) {
        const struct dlb_core_settings *c = &p->configs[i].core;
        const char *model = c->model, *dir = c->dataset_path;
        /* the value's text: folder:PATH carries its path */
        const char *mode = p->configs[i].values[0][DLB_KEY_dataset].s;
        if (c->dataset == DLB_DATA_SYNTHETIC)
            continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) {
            const struct dlb_core_settings *o = &p->configs[j].core;
            seen = !strcmp(model, o->model) &&
                   !strcmp(mode, p->configs[j].values[0][DLB_KEY_dataset].s) &&
                   !strcmp(dir, o->dataset_path);
        }
        if (seen)
            continue;
        char *path = dlb_model_file_find(model, suite_paths, n_suite_paths,
                                         dlb_installed_suite_dir(), err);
        if (!path)
            return DLB_ERR_INPUT;
        struct dlb_model_spec *m = NULL;
        dlb_status st = dlb_model_file_load(path, &m, err);
        free(path);
        for (int train = 1; st == DLB_OK && train >= 0; train--)
            st = check_split(mode, *dir ? dir : DLB_DATASET_DEFAULT_DIR, train, m, err);
        dlb_model_spec_free(m);
        if (st != DLB_OK)
            return st == DLB_ERR_NOMEM ? st : DLB_ERR_INPUT;
    }
    return DLB_OK;
}
