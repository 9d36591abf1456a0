/* LeNet trained on the cuda backend follows the cpu backend (ref where
 * oneDNN is not built in): the same seed, data order, initial weights and
 * dropout masks, so only rounding differs.
 *   after 20 steps: last-step loss within 1e-3 relative (f32 rounding has
 *     barely moved the trajectories apart);
 *   after 200 steps: last-step loss within 5% relative and test accuracy
 *     on 2,000 images within 2 points (rounding differences grow over
 *     training, as between any two f32 implementations).
 * Fashion-MNIST when installed, else the deterministic synthetic set.
 * Prints both backends' training time. Exits 77 without a GPU. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/backend.h"
#include "data/dataset.h"
#include "gpu_open.h"
#include "train/train_run.h"

struct result {
    double loss, acc, secs;
};

static int train(struct dlb_backend *be, const struct dlb_model_spec *spec,
                 const struct dlb_dataset *tr, const struct dlb_dataset *te,
                 uint64_t steps, struct result *out)
{
    struct dlb_model *m = NULL;
    struct dlb_error err = {""};
    struct dlb_batch_spec bs = {64, 1, 0, 1, 42};
    struct dlb_dataset part = *te;
    double test_loss = 0;
    part.n = part.n > 2000 ? 2000 : part.n;
    if (dlb_model_create(spec, be, DLB_F32, 42, &m, &err) != DLB_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 0;
    }
    dlb_model_set_sgd(m, 0.01f, 0.9f);
    struct dlb_trainer tpl = {.model = m};
    dlb_status s = dlb_train_run(&tpl, tr, &bs, NULL, steps, &out->loss,
                                 &out->secs, &err);
    if (s == DLB_OK)
        s = dlb_model_evaluate(m, &part, 500, &test_loss, &out->acc, NULL, &err);
    if (s != DLB_OK)
        fprintf(stderr, "%s: %s\n", dlb_backend_name(be), err.msg);
    else
        fprintf(stderr, "%-4s %3llu steps: %.3f s (%.0f samples/s), last loss "
                "%.6f, accuracy %.2f%%\n", dlb_backend_name(be),
                (unsigned long long)steps, out->secs,
                out->secs > 0 ? (double)steps * 64 / out->secs : 0.0,
                out->loss, out->acc);
    dlb_model_destroy(m);
    return s == DLB_OK;
}

int main(void)
{
    struct dlb_backend_config cfg = {.seed = 42};
    struct dlb_dataset tr, te;
    struct dlb_model_spec *spec = NULL;
    struct dlb_backend *gpu, *host = NULL;
    struct dlb_error err = {""};
    const char *srcdir = getenv("srcdir");
    char path[1024], why[512];
    int synth = 0;
    gpu = gpu_open_or_skip(&cfg);
    snprintf(path, sizeof path, "%s/suites/models/lenet.ini",
             srcdir && *srcdir ? srcdir : ".");
    if (dlb_dataset_open("auto", NULL, 1, 42, &tr, &synth, &err) ||
        dlb_dataset_open("auto", NULL, 0, 42, &te, &synth, &err) ||
        dlb_model_file_load(path, &spec, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    if (synth)
        fprintf(stderr, "Fashion-MNIST not installed: synthetic data\n");
    if (dlb_backend_open("cpu", &cfg, &host, why, sizeof why) != DLB_OK &&
        dlb_backend_open("ref", &cfg, &host, why, sizeof why) != DLB_OK) {
        fprintf(stderr, "%s\n", why);
        return 1;
    }
    struct result g = {0, 0, 0}, h = {0, 0, 0};
    CHECK(train(gpu, spec, &tr, &te, 20, &g) && train(host, spec, &tr, &te, 20, &h));
    CHECK(fabs(g.loss - h.loss) <= 1e-3 * fmax(1.0, fabs(h.loss)));
    CHECK(train(gpu, spec, &tr, &te, 200, &g) && train(host, spec, &tr, &te, 200, &h));
    CHECK(fabs(g.loss - h.loss) <= 0.05 * fmax(1.0, fabs(h.loss)));
    CHECK(fabs(g.acc - h.acc) <= 2.0);
    CHECK(g.loss < 2.0); /* it learned: ln 10 = 2.30 at the start */
    dlb_backend_close(gpu);
    dlb_backend_close(host);
    dlb_model_spec_free(spec);
    dlb_dataset_free(&tr);
    dlb_dataset_free(&te);
    return check_exit();
}
