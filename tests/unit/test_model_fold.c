/* Batch norms folded into the convolutions before them in inference
 * (core/model/model_fold.c), on ref and cpu: the folded pass agrees with
 * the unfolded one (an observation pass, which neither folds nor fuses)
 * within 1e-5 of the output's largest magnitude, on random statistics far
 * from the identity; no batch norm runs in it, and what followed each
 * batch norm fuses with its convolution (fold.ini says which); the folded
 * weights follow every change: a training step (weights and running
 * statistics), a write of one statistic from outside; and an unchanged
 * model is not folded again (no allocation, the same bits). A
 * mixed-precision network (bf16 but the log-softmax, as amp runs it)
 * folds and fuses the same, into bf16 weights, and its folded pass is at
 * least as close to the fp32 network's output as its unfolded pass. */
#include "check.h"

#include <string.h>

#include "model_fixture.h"
#include "model/model_impl.h"
#include "model/model_quant.h"

#define FOLD "tests/unit/models/fold.ini"
#define N 4
#define PER (3 * 8 * 8)
#define CLASSES 5

static dlb_status keep_output(void *ctx, unsigned layer, const float *x,
                              uint32_t n, size_t per)
{
    (void)layer;
    memcpy(ctx, x, n * per * sizeof *x); /* the last call is the output */
    return DLB_OK;
}

/* The output of a pass that neither folds nor fuses. */
static void unfolded(struct dlb_model *m, const float *img, float *out)
{
    struct dlb_error err = {""};
    float *tmp = malloc((size_t)N * 8 * 8 * 16 * sizeof *tmp);
    CHECK(dlb_model_quant_observe(m, img, N, keep_output, tmp, &err) == DLB_OK);
    memcpy(out, tmp, N * CLASSES * sizeof *out);
    free(tmp);
}

static double max_diff(const float *a, const float *b, double *scale)
{
    double d = 0;
    *scale = 0;
    for (size_t k = 0; k < N * CLASSES; k++) {
        d = fmax(d, fabs((double)a[k] - b[k]));
        *scale = fmax(*scale, fabs((double)b[k]));
    }
    return d;
}

static void check_agrees(const char *what, const float *folded, const float *plain)
{
    double scale, d = max_diff(folded, plain, &scale);
    if (d > 1e-5 * scale)
        fprintf(stderr, "%s: folded and unfolded differ by %g (scale %g)\n",
                what, d, scale);
    CHECK(d <= 1e-5 * scale && scale > 0);
}

/* Every batch norm's four tensors drawn at random: gamma in [0.5, 2],
 * beta and the mean in [-1, 1], the variance in [0.2, 3]. */
static void random_statistics(struct dlb_model *m, uint64_t seed)
{
    struct dlb_rng r;
    struct dlb_error err = {""};
    dlb_rng_seed(&r, seed);
    for (size_t i = 0; i < m->spec->n_layers; i++) {
        const struct dlb_model_layer *ml = &m->layers[i];
        if (ml->spec->kind != DLB_LAYER_BATCHNORM)
            continue;
        int idx[4] = {ml->weight, ml->bias, ml->run_mean, ml->run_var};
        double lo[4] = {0.5, -1, -1, 0.2}, hi[4] = {2, 1, 1, 3};
        for (int k = 0; k < 4; k++) {
            const struct dlb_model_param *p = &m->params[idx[k]];
            float *v = malloc(p->t.count * sizeof *v);
            for (size_t j = 0; j < p->t.count; j++)
                v[j] = (float)(lo[k] + (hi[k] - lo[k]) * dlb_rng_double(&r));
            CHECK(dlb_model_tensor_io(m, p->name, v, p->t.count, 1, &err) == DLB_OK);
            free(v);
        }
    }
}

static int count_kind(struct dlb_backend *be, enum dlb_op_kind kind)
{
    const struct dlb_op_profile *ops;
    size_t n = dlb_backend_profile(be, &ops);
    int c = 0;
    for (size_t k = 0; k < n; k++)
        c += ops[k].kind == kind ? (int)ops[k].calls : 0;
    return c;
}

static void test_backend(const char *name, const struct dlb_model_spec *s)
{
    struct dlb_backend_config cfg = {.seed = 3, .profile = 1};
    struct dlb_backend *be = NULL;
    struct dlb_error err = {""};
    char why[256];
    float img[N * PER], a[N * CLASSES], b[N * CLASSES], c[N * CLASSES];
    int32_t lab[N];
    double loss = 0;
    if (dlb_backend_open(name, &cfg, &be, why, sizeof why) != DLB_OK || !be) {
        fprintf(stderr, "%s skipped: %s\n", name, why);
        return;
    }
    struct dlb_model *m = fx_make(s, be, DLB_F32, 5);
    if (!m) {
        dlb_backend_close(be);
        return;
    }
    int folds = 0;
    for (size_t i = 0; i < s->n_layers; i++)
        folds += dlb_model_fold_applies(m, i);
    CHECK(folds == 6);
    fx_random_batch(s, N, 9, img, lab);
    random_statistics(m, 17);

    dlb_backend_profile_reset(be);
    CHECK(dlb_model_infer(m, img, N, a, &err) == DLB_OK);
    CHECK(count_kind(be, DLB_OP_BATCHNORM) == 0);
    CHECK(count_kind(be, DLB_OP_CONV2D_DW) == 1);
    CHECK(count_kind(be, DLB_OP_CONV2D_ADD) == 1);
    CHECK(count_kind(be, DLB_OP_CONV2D_RELU) == 1);
    unfolded(m, img, b);
    check_agrees(name, a, b);

    /* unchanged: the same bits, and nothing folded or allocated again */
    uint64_t epoch = m->fold_epoch;
    const struct dlb_buffer *w0 = m->layers[0].fold_w;
    CHECK(dlb_model_infer(m, img, N, c, &err) == DLB_OK);
    CHECK(memcmp(a, c, sizeof a) == 0);
    CHECK(m->fold_epoch == epoch && m->layers[0].fold_w == w0);

    /* a training step moves weights and statistics: folded again */
    CHECK(dlb_model_forward_backward(m, img, lab, N, 1, &loss, &err) == DLB_OK);
    CHECK(dlb_model_sgd_step(m, &err) == DLB_OK);
    CHECK(dlb_model_infer(m, img, N, c, &err) == DLB_OK);
    CHECK(memcmp(a, c, sizeof a) != 0);
    unfolded(m, img, b);
    check_agrees("after a training step", c, b);

    /* a training forward alone moves the running statistics */
    CHECK(dlb_model_forward_backward(m, img, lab, N, 1, &loss, &err) == DLB_OK);
    CHECK(dlb_model_infer(m, img, N, a, &err) == DLB_OK);
    unfolded(m, img, b);
    check_agrees("after a training forward", a, b);

    /* one statistic written from outside */
    const struct dlb_model_param *var = &m->params[m->layers[4].run_var];
    float v[16];
    CHECK(var->t.count == 16);
    for (int k = 0; k < 16; k++)
        v[k] = 0.05f + 0.1f * (float)k;
    CHECK(dlb_model_tensor_io(m, var->name, v, 16, 1, &err) == DLB_OK);
    CHECK(dlb_model_infer(m, img, N, c, &err) == DLB_OK);
    CHECK(memcmp(a, c, sizeof a) != 0);
    unfolded(m, img, b);
    check_agrees("after a write", c, b);
    dlb_model_destroy(m);
    dlb_backend_close(be);
}

static void test_bf16(const char *name, const struct dlb_model_spec *s)
{
    struct dlb_backend_config cfg = {.seed = 3, .profile = 1};
    struct dlb_backend *be = NULL;
    struct dlb_error err = {""};
    char why[256];
    enum dlb_dtype types[DLB_LAYER_KIND_COUNT];
    float img[N * PER], p32[N * CLASSES], a[N * CLASSES], u[N * CLASSES];
    int32_t lab[N];
    if (dlb_backend_open(name, &cfg, &be, why, sizeof why) != DLB_OK || !be) {
        fprintf(stderr, "%s skipped: %s\n", name, why);
        return;
    }
    struct dlb_model *m = fx_make(s, be, DLB_F32, 5);
    if (!m) {
        dlb_backend_close(be);
        return;
    }
    fx_random_batch(s, N, 9, img, lab);
    random_statistics(m, 17);
    unfolded(m, img, p32); /* the fp32 network's output */
    for (int k = 0; k < DLB_LAYER_KIND_COUNT; k++)
        types[k] = k == DLB_LAYER_LOGSOFTMAX ? DLB_F32 : DLB_BF16;
    if (dlb_model_set_precision(m, types, 1, &err) != DLB_OK) {
        fprintf(stderr, "%s: bf16 skipped: %s\n", name, err.msg);
        dlb_model_destroy(m);
        dlb_backend_close(be);
        return;
    }
    int folds = 0;
    for (size_t i = 0; i < s->n_layers; i++)
        folds += dlb_model_fold_applies(m, i);
    CHECK(folds == 6);

    dlb_backend_profile_reset(be);
    CHECK(dlb_model_infer(m, img, N, a, &err) == DLB_OK);
    CHECK(count_kind(be, DLB_OP_BATCHNORM) == 0);
    /* the expansion and depthwise pair fused, or each with its ReLU */
    int dw = strcmp(name, "cpu") != 0 || check_cpu_bf16_dw_fuses();
    CHECK(count_kind(be, DLB_OP_CONV2D_DW) == dw);
    CHECK(count_kind(be, DLB_OP_CONV2D_ADD) == 1);
    CHECK(count_kind(be, DLB_OP_CONV2D_RELU) == (dw ? 1 : 3));
    CHECK(m->layers[0].fold_w && dlb_buffer_dtype(m->layers[0].fold_w) == DLB_BF16);
    unfolded(m, img, u);
    double scale, ef = max_diff(a, p32, &scale), eu = max_diff(u, p32, &scale);
    fprintf(stderr, "%s bf16: folded %.3g, unfolded %.3g from fp32 (scale %.3g)\n",
            name, ef, eu, scale);
    /* bf16 keeps 8 bits: a few roundings of 2^-9 through the network */
    CHECK(ef <= 0.05 * scale && eu <= 0.05 * scale);
    /* one rounding of the folded weights, where the unfolded pass rounds
     * the convolution's output and the batch norm's */
    CHECK(ef <= 1.5 * eu + 1e-3 * scale);
    dlb_model_destroy(m);
    dlb_backend_close(be);
}

int main(void)
{
    struct dlb_model_spec *s = fx_load_spec(FOLD);
    if (!s)
        return check_exit();
    test_backend("ref", s);
    test_backend("cpu", s);
    test_bf16("ref", s);
    test_bf16("cpu", s);
    dlb_model_spec_free(s);
    return check_exit();
}
