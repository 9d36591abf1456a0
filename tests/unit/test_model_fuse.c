/* Layers fused (model_fuse.c): in dlb_model_infer LeNet's conv1, pool1
 * and relu1 run as one cpu backend pass (and conv2 on the inference
 * kernel); in a training step conv1 and pool1, forward and backward
 * (conv1's weight gradient read from pool1's output gradient). Against
 * the ref backend's unfused layers (same weights: same seed), on random
 * images: the log probabilities within 1e-5 of the norm, the bound of
 * the cpu backend's convolutions, and after a training step every
 * parameter's gradient within the same bound. On a CPU with AVX-512 the
 * fusions must have run (2 layers inside conv1 in inference, 1 in
 * training, whose backward is one pass); a pass that does not fuse
 * (dlb_model_logits, as distillation's teacher runs it) must still
 * agree. test_mp checks the same steps unfused to the bit. Exits 77
 * without the cpu backend. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/backend.h"
#include "model/model.h"
#include "model/model_file.h"
#include "model/model_impl.h"
#include "services/model_distill.h"
#include "util/rng.h"

#define N 7
#define CLASSES 10

static double rel_err(const float *a, const float *b, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return sqrt(num / (den > 0.0 ? den : 1.0));
}

static int have_avx512(void)
{
#if defined(__GNUC__) && defined(__x86_64__)
    return __builtin_cpu_supports("avx512f") != 0;
#else
    return 0;
#endif
}

int main(void)
{
    struct dlb_backend_config cfg = {.seed = 42};
    struct dlb_backend *cpu = NULL, *ref = NULL;
    struct dlb_model_spec *spec = NULL;
    struct dlb_model *mc = NULL, *mr = NULL;
    struct dlb_error err = {""};
    const char *srcdir = getenv("srcdir");
    char path[1024], why[512];
    if (dlb_backend_open("cpu", &cfg, &cpu, why, sizeof why) != DLB_OK) {
        fprintf(stderr, "skip: %s\n", why);
        return 77;
    }
    snprintf(path, sizeof path, "%s/suites/models/lenet.ini",
             srcdir && *srcdir ? srcdir : ".");
    CHECK(dlb_backend_open("ref", &cfg, &ref, why, sizeof why) == DLB_OK);
    CHECK(dlb_model_file_load(path, &spec, &err) == DLB_OK);
    if (!ref || !spec) {
        fprintf(stderr, "%s\n", err.msg);
        return check_exit();
    }
    CHECK(dlb_model_create(spec, cpu, DLB_F32, 42, &mc, &err) == DLB_OK);
    CHECK(dlb_model_create(spec, ref, DLB_F32, 42, &mr, &err) == DLB_OK);
    if (!mc || !mr) {
        fprintf(stderr, "%s\n", err.msg);
        return check_exit();
    }
    struct dlb_rng rng;
    dlb_rng_seed(&rng, 7);
    size_t per = (size_t)spec->in_c * spec->in_h * spec->in_w;
    float *img = malloc(N * per * sizeof *img);
    float *lc = malloc(N * CLASSES * sizeof *lc);
    float *lr = malloc(N * CLASSES * sizeof *lr);
    float *lg = malloc(N * CLASSES * sizeof *lg);
    for (size_t i = 0; i < N * per; i++)
        img[i] = (float)(0.05 + dlb_rng_double(&rng)); /* never 0 */

    CHECK(dlb_model_infer(mc, img, N, lc, &err) == DLB_OK);
    CHECK(dlb_model_infer(mr, img, N, lr, &err) == DLB_OK);
    double e = rel_err(lc, lr, N * CLASSES);
    fprintf(stderr, "fused inference against ref: relative error %.2g\n", e);
    CHECK(e <= 1e-5);
    if (have_avx512())
        CHECK(mc->fused_layers == 2); /* pool1 and relu1 */
    CHECK(mc->fuse == 0 && mc->layers[1].in_conv_pool == 0);

    /* Unfused on the same backend: logits, then log-softmax here. */
    CHECK(dlb_model_logits(mc, img, N, lg, &err) == DLB_OK);
    for (size_t r = 0; r < N; r++) {
        float *row = lg + r * CLASSES, mx = row[0];
        double sum = 0.0;
        for (size_t k = 1; k < CLASSES; k++)
            mx = row[k] > mx ? row[k] : mx;
        for (size_t k = 0; k < CLASSES; k++)
            sum += exp((double)row[k] - mx);
        for (size_t k = 0; k < CLASSES; k++)
            row[k] = (float)((double)row[k] - mx - log(sum));
    }
    e = rel_err(lg, lr, N * CLASSES);
    fprintf(stderr, "unfused logits against ref: relative error %.2g\n", e);
    CHECK(e <= 1e-5);

    /* One training step's gradients. */
    int32_t labels[N];
    double loss_c = 0.0, loss_r = 0.0;
    for (size_t r = 0; r < N; r++)
        labels[r] = (int32_t)dlb_rng_below(&rng, CLASSES);
    CHECK(dlb_model_forward_train(mc, img, labels, N, &err) == DLB_OK);
    if (have_avx512()) {
        CHECK(mc->fused_layers == 1);        /* pool1; relu1 runs apart */
        CHECK(mc->layers[0].pool_bwd == 1);  /* and one backward pass */
    }
    CHECK(dlb_model_read_loss(mc, &loss_c, &err) == DLB_OK);
    CHECK(dlb_model_backward(mc, 1.0f, &err) == DLB_OK);
    CHECK(mc->layers[0].pool_bwd == 0 && mc->layers[1].ws == NULL);
    dlb_model_step_release(mc);
    CHECK(dlb_model_forward_backward(mr, img, labels, N, 1.0f, &loss_r,
                                     &err) == DLB_OK);
    CHECK_NEAR(loss_c, loss_r, 1e-5);
    CHECK(mc->n_params == mr->n_params);
    for (size_t k = 0; k < mc->n_params && k < mr->n_params; k++) {
        size_t cnt = mc->params[k].t.count;
        float *gc = malloc(cnt * sizeof *gc), *gr = malloc(cnt * sizeof *gr);
        CHECK(dlb_backend_ops_of(cpu)->copy_to_host(
                  cpu, gc, mc->params[k].grad, 0, cnt * sizeof *gc) == DLB_OK);
        CHECK(dlb_backend_ops_of(ref)->copy_to_host(
                  ref, gr, mr->params[k].grad, 0, cnt * sizeof *gr) == DLB_OK);
        e = rel_err(gc, gr, cnt);
        fprintf(stderr, "gradient of parameter %zu (%zu values): relative "
                "error %.2g\n", k, cnt, e);
        CHECK(e <= 1e-5);
        free(gc);
        free(gr);
    }

    free(img);
    free(lc);
    free(lr);
    free(lg);
    dlb_model_destroy(mc);
    dlb_model_destroy(mr);
    dlb_model_spec_free(spec);
    dlb_backend_close(cpu);
    dlb_backend_close(ref);
    return check_exit();
}
