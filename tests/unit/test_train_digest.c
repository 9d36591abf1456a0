/* Training is the same, bit for bit, whatever the code's structure: LeNet
 * and vgg-small on the ref backend, three SGD steps from a fixed seed on
 * fixed random images, give log-probabilities on a batch and parameters
 * whose digest (FNV-1a over their bytes, in order) equals the one stored
 * here, which the
 * interfaces' redesign took from the code before it. The ref backend
 * computes in double with plain loops (no FMA contraction, one thread),
 * so the digest is the same on every x86-64 machine. The cpu backend's
 * own bits depend on the CPU and the oneDNN version: DIGEST_PRINT=1 prints
 * its digest too, for tests/bench/same-results.sh's side-by-side check. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "model/model.h"
#include "model/model_file.h"
#include "model/model_impl.h"
#include "model/model_quant.h"
#include "util/rng.h"

#define BATCH 6
#define STEPS 3

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* The observed pass's output (its last call), where it fits. */
struct literal {
    float *out;
    size_t count;
};

static dlb_status keep_last(void *ctx, unsigned layer, const float *x,
                            uint32_t n, size_t per)
{
    struct literal *l = ctx;
    (void)layer;
    if ((size_t)n * per == l->count)
        memcpy(l->out, x, l->count * sizeof *x);
    return DLB_OK;
}

/* The digest of `name`'s parameters after STEPS steps on backend `be`. */
static uint64_t train(const char *name, struct dlb_backend *be)
{
    const char *srcdir = getenv("srcdir");
    char path[1024];
    struct dlb_model_spec *spec = NULL;
    struct dlb_model *m = NULL;
    struct dlb_error err = {""};
    uint64_t h = 0xcbf29ce484222325ull;
    snprintf(path, sizeof path, "%s/suites/models/%s.ini",
             srcdir && *srcdir ? srcdir : ".", name);
    CHECK(dlb_model_file_load(path, &spec, &err) == DLB_OK);
    if (spec)
        CHECK(dlb_model_create(spec, be, DLB_F32, 42, &m, &err) == DLB_OK);
    if (!m) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        dlb_model_spec_free(spec);
        return 0;
    }
    dlb_model_set_sgd(m, 0.01f, 0.9f);
    struct dlb_rng rng;
    dlb_rng_seed(&rng, 2026);
    size_t per = (size_t)spec->in_c * spec->in_h * spec->in_w;
    float *img = malloc(BATCH * per * sizeof *img);
    int32_t labels[BATCH];
    for (int s = 0; s < STEPS; s++) {
        double loss = 0;
        for (size_t i = 0; i < BATCH * per; i++)
            img[i] = (float)(dlb_rng_double(&rng) * 2 - 0.5);
        for (int i = 0; i < BATCH; i++)
            labels[i] = (int32_t)dlb_rng_below(&rng, spec->classes);
        CHECK(dlb_model_forward_backward(m, img, labels, BATCH, 1.0f, &loss,
                                         &err) == DLB_OK);
        CHECK(dlb_model_sgd_step(m, &err) == DLB_OK);
    }
    /* and the trained model's inference, as its layers say: a pass that
     * neither folds nor fuses (an observation pass). The inference pass
     * proper (its fused and inference kernels on the cpu backend, the
     * batch norms folded into the convolutions) rounds otherwise: it
     * agrees within 1e-5 of the largest log-probability. */
    size_t nout = (size_t)BATCH * spec->classes;
    float *out = malloc(nout * sizeof *out), *lit = malloc(nout * sizeof *lit);
    struct literal lt = {lit, nout};
    CHECK(dlb_model_quant_observe(m, img, BATCH, keep_last, &lt, &err) == DLB_OK);
    h = fnv(h, lit, nout * sizeof *lit);
    CHECK(dlb_model_infer(m, img, BATCH, out, &err) == DLB_OK);
    double worst = 0, scale = 0;
    for (size_t k = 0; k < nout; k++) {
        worst = fmax(worst, fabs((double)out[k] - lit[k]));
        scale = fmax(scale, fabs((double)lit[k]));
    }
    if (worst > 1e-5 * scale)
        fprintf(stderr, "%s: inference differs from its layers' by %g\n", name, worst);
    CHECK(worst <= 1e-5 * scale);
    free(out);
    free(lit);
    for (size_t k = 0; k < m->n_params; k++) {
        size_t bytes = m->params[k].t.count * sizeof(float);
        float *v = malloc(bytes);
        CHECK(dlb_backend_ops_of(be)->copy_to_host(be, v, m->params[k].t.buf, 0,
                                                    bytes) == DLB_OK);
        h = fnv(h, v, bytes);
        free(v);
    }
    free(img);
    dlb_model_destroy(m);
    dlb_model_spec_free(spec);
    return h;
}

int main(void)
{
    struct dlb_backend_config cfg = {.seed = 42, .threads = 1};
    struct dlb_backend *ref = NULL, *cpu = NULL;
    char why[512];
    int print = getenv("DIGEST_PRINT") != NULL;
    CHECK(dlb_backend_open("ref", &cfg, &ref, why, sizeof why) == DLB_OK);
    if (!ref)
        return check_exit();
    uint64_t lenet = train("lenet", ref), vgg = train("vgg-small", ref);
    fprintf(stderr, "ref: lenet %016llx, vgg-small %016llx\n",
            (unsigned long long)lenet, (unsigned long long)vgg);
    CHECK(lenet == 0x58f1af28d79feebaull);
    CHECK(vgg == 0xa346034ec3da3406ull);
    if (print && dlb_backend_open("cpu", &cfg, &cpu, why, sizeof why) == DLB_OK) {
        printf("cpu lenet %016llx\ncpu vgg-small %016llx\n",
               (unsigned long long)train("lenet", cpu),
               (unsigned long long)train("vgg-small", cpu));
        dlb_backend_close(cpu);
    }
    if (print)
        printf("ref lenet %016llx\nref vgg-small %016llx\n",
               (unsigned long long)lenet, (unsigned long long)vgg);
    dlb_backend_close(ref);
    return check_exit();
}
