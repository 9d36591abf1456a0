/* The model as a graph (tests/unit/models/residual.ini: an output read by
 * three layers, a layer reading the network's input, adds of two and three
 * inputs):
 * - backward is the gradient of forward in fp64 on ref, so the gradients
 *   of a tensor read several times are summed (model_fixture.h's bounds);
 * - the cpu backend trains and infers it as ref does (fp32: gradients
 *   within 1e-4 of the largest, outputs within 1e-4);
 * - an inference pass holds each activation exactly while a later layer
 *   still reads it, and no step leaves memory behind;
 * - in inference a convolution whose output only an add reads is summed
 *   onto the add's other input where nothing reads that after
 *   (tests/unit/models/conv_add.ini says where), and a 1x1 convolution
 *   and the depthwise one after it run as one (conv_dw.ini), with the
 *   same outputs;
 * - mixed precision runs through the adds; int8 calibration sees each
 *   layer's own input;
 * - what a chain needs is refused with the reason: a pipeline stage cut
 *   where more than one tensor crosses; a removal of units that an add
 *   cannot take (one of the layers meeting there alone), while the three
 *   meeting at the adds removed as one group plan a smaller network. */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "model_fixture.h"
#include "model/model_impl.h"
#include "model/model_prune.h"
#include "model/model_quant.h"
#include "services/model_stage.h"

#define RES "tests/unit/models/residual.ini"
#define CONV_RELU "tests/unit/models/conv_relu.ini"
#define CONV_ADD "tests/unit/models/conv_add.ini"
#define CONV_DW "tests/unit/models/conv_dw.ini"
enum { N = 3, PER = 2 * 8 * 8 };

static struct dlb_backend *ref;

/* The ref backend's host memory, counted. */
struct counter {
    size_t live, blocks;
};

static void *count_alloc(void *ctx, size_t bytes)
{
    struct counter *c = ctx;
    void *p = malloc(bytes);
    if (p) {
        c->live += bytes;
        c->blocks++;
    }
    return p;
}

static void count_free(void *ctx, void *p, size_t bytes)
{
    struct counter *c = ctx;
    if (p) {
        c->live -= bytes;
        c->blocks--;
    }
    free(p);
}

static void test_gradients(const struct dlb_model_spec *s)
{
    struct dlb_model *m = fx_make(s, ref, DLB_F64, 7);
    float img[N * PER];
    int32_t lab[N];
    fx_random_batch(s, N, 21, img, lab);
    fx_check_gradients(ref, m, img, lab, N, 4, 9);
    dlb_model_destroy(m);
}

/* Training steps and inference leave exactly the model's own memory. */
static void test_no_leak(const struct dlb_model_spec *s)
{
    struct counter c = {0, 0};
    struct dlb_backend_config cfg = {.seed = 1, .host_alloc = count_alloc,
                                     .host_free = count_free,
                                     .alloc_ctx = &c};
    struct dlb_backend *be = NULL;
    struct dlb_error err = {""};
    char why[256];
    float img[N * PER], out[N * 5];
    int32_t lab[N];
    double loss = 0;
    CHECK(dlb_backend_open("ref", &cfg, &be, why, sizeof why) == DLB_OK);
    size_t base = c.live;
    struct dlb_model *m = be ? fx_make(s, be, DLB_F32, 3) : NULL;
    if (!m)
        return;
    size_t live = c.live, blocks = c.blocks;
    fx_random_batch(s, N, 4, img, lab);
    for (int k = 0; k < 2; k++) {
        CHECK(dlb_model_forward_backward(m, img, lab, N, 1, &loss, &err) == 0);
        CHECK(dlb_model_sgd_step(m, &err) == DLB_OK);
        CHECK(c.live == live && c.blocks == blocks);
    }
    /* Inference keeps the folded copies of the convolutions with a batch
     * norm after them (model_fold.c), made again in place after a step;
     * nothing else. */
    int folds = 0;
    for (size_t i = 0; i < s->n_layers; i++)
        folds += dlb_model_fold_applies(m, i);
    CHECK(dlb_model_infer(m, img, N, out, &err) == DLB_OK);
    CHECK((c.blocks == blocks) == (folds == 0) && isfinite(loss));
    live = c.live, blocks = c.blocks;
    CHECK(dlb_model_forward_backward(m, img, lab, N, 1, &loss, &err) == 0);
    CHECK(dlb_model_sgd_step(m, &err) == DLB_OK);
    CHECK(dlb_model_infer(m, img, N, out, &err) == DLB_OK);
    CHECK(c.live == live && c.blocks == blocks);
    dlb_model_destroy(m);
    CHECK(c.live == base);
    dlb_backend_close(be);
}

/* Whether activation t is still read by layer i or a later one; a
 * flatten's input lives as long as its output, which is the same buffer. */
static int needed(const struct dlb_model_spec *s, size_t t, size_t i)
{
    for (size_t j = i; j < s->n_layers; j++)
        for (unsigned k = 0; k < s->layers[j].n_inputs; k++)
            if ((size_t)(s->layers[j].inputs[k] + 1) == t)
                return 1;
    for (size_t j = 0; j < s->n_layers; j++)
        if (s->layers[j].kind == DLB_LAYER_FLATTEN &&
            (size_t)(s->layers[j].inputs[0] + 1) == t && j + 1 <= i &&
            needed(s, j + 1, i))
            return 1;
    return t == s->n_layers;
}

static int checked_layers;

static dlb_status check_alive(struct dlb_model *m, size_t i, void *ctx,
                              struct dlb_error *err)
{
    (void)ctx;
    (void)err;
    for (size_t t = 0; t <= i; t++) {
        int want = needed(m->spec, t, i);
        if ((m->act[t] != NULL) != want)
            fprintf(stderr, "before layer %zu: activation %zu %s\n", i, t,
                    want ? "was freed" : "is alive");
        CHECK((m->act[t] != NULL) == want);
    }
    checked_layers++;
    return DLB_OK;
}

static void test_lifetimes(const struct dlb_model_spec *s)
{
    struct dlb_model *m = fx_make(s, ref, DLB_F32, 3);
    struct dlb_error err = {""};
    float img[N * PER];
    int32_t lab[N];
    if (!m)
        return;
    fx_random_batch(s, N, 5, img, lab);
    m->n = N;
    CHECK(dlb_model_upload_input(m, img, N, &m->act[0], &err) == DLB_OK);
    m->own[0] = 1;
    CHECK(dlb_model_infer_pass(m, s->n_layers, check_alive, NULL, &err) ==
          DLB_OK);
    CHECK(checked_layers == (int)s->n_layers + 1);
    /* The residual's input r1 lived from its relu to the second add. */
    CHECK(needed(s, 3, 8) && !needed(s, 3, 9));
    dlb_model_step_release(m);
    dlb_model_destroy(m);
}

static double max_abs(const float *a, size_t n)
{
    double mx = 0;
    for (size_t i = 0; i < n; i++)
        mx = fmax(mx, fabs(a[i]));
    return mx;
}

/* Inference fuses, training's forward does not: on ref (double inside,
 * so the two orders round alike to 1e-6), the mean loss of inference's
 * outputs is training's loss on the same batch, and a second inference
 * gives the same outputs (the buffers a fused convolution took over were
 * not freed or read after). */
static void test_fused_as_trained(const struct dlb_model_spec *s)
{
    struct dlb_model *m = fx_make(s, ref, DLB_F32, 11);
    struct dlb_error err = {""};
    float img[8 * PER], out[8 * 5], again[8 * 5];
    int32_t lab[8];
    double loss = NAN, nll = 0;
    if (!m)
        return;
    fx_random_batch(s, 8, 12, img, lab);
    CHECK(dlb_model_infer(m, img, 8, out, &err) == DLB_OK);
    CHECK(dlb_model_infer(m, img, 8, again, &err) == DLB_OK);
    CHECK(memcmp(out, again, sizeof out) == 0);
    CHECK(dlb_model_forward_backward(m, img, lab, 8, 1, &loss, &err) == 0);
    for (int k = 0; k < 8; k++)
        nll -= out[k * 5 + lab[k]] / 8.0;
    CHECK_NEAR(nll, loss, 1e-6);
    dlb_model_destroy(m);
}

/* Training's gradients and inference's outputs on cpu against ref; the
 * cpu side's inference runs `fused` convolutions and `fused_adds` adds
 * with the ReLU after them as one operation, `conv_adds` convolutions
 * with the add after them, and `dws` 1x1 convolutions with the depthwise
 * one after them (its profile counts them). */
static void test_cpu_matches_ref(const struct dlb_model_spec *s, int fused,
                                 int fused_adds, int conv_adds, int dws)
{
    struct dlb_backend_config cfg = {.seed = 42, .profile = 1};
    struct dlb_backend *cpu = NULL;
    struct dlb_error err = {""};
    char why[256];
    float img[8 * PER], oc[8 * 5], orf[8 * 5];
    int32_t lab[8];
    double lc = 0, lr = 0;
    if (dlb_backend_open("cpu", &cfg, &cpu, why, sizeof why) != DLB_OK) {
        fprintf(stderr, "cpu part skipped: %s\n", why);
        return;
    }
    struct dlb_model *mc = fx_make(s, cpu, DLB_F32, 8);
    struct dlb_model *mr = fx_make(s, ref, DLB_F32, 8);
    fx_random_batch(s, 8, 6, img, lab);
    CHECK(dlb_model_forward_backward(mc, img, lab, 8, 1, &lc, &err) == 0);
    CHECK(dlb_model_forward_backward(mr, img, lab, 8, 1, &lr, &err) == 0);
    CHECK_NEAR(lc, lr, 1e-5);
    for (size_t t = 0; t < dlb_model_n_tensors(mr); t++) {
        const struct dlb_model_tensor *mt = dlb_model_tensor_at(mr, t);
        struct dlb_buffer *gc = NULL, *gr = NULL;
        CHECK(dlb_model_find(mc, mt->name, NULL, &gc, NULL) == DLB_OK);
        CHECK(dlb_model_find(mr, mt->name, NULL, &gr, NULL) == DLB_OK);
        if (!gc || !gr)
            continue;
        float *a = malloc(mt->count * 4), *b = malloc(mt->count * 4);
        CHECK(DLB_BE_CALL(cpu, copy_to_host, a, gc, 0, mt->count * 4) == 0);
        CHECK(DLB_BE_CALL(ref, copy_to_host, b, gr, 0, mt->count * 4) == 0);
        double tol = 1e-4 * max_abs(b, mt->count) + 1e-6, worst = 0;
        for (size_t k = 0; k < mt->count; k++)
            worst = fmax(worst, fabs((double)a[k] - b[k]));
        if (worst > tol)
            fprintf(stderr, "%s: gradients differ by %g (tol %g)\n", mt->name,
                    worst, tol);
        CHECK(worst <= tol);
        free(a);
        free(b);
    }
    CHECK(dlb_model_sgd_step(mc, &err) == DLB_OK);
    CHECK(dlb_model_sgd_step(mr, &err) == DLB_OK);
    dlb_backend_profile_reset(cpu);
    CHECK(dlb_model_infer(mc, img, 8, oc, &err) == DLB_OK);
    CHECK(dlb_model_infer(mr, img, 8, orf, &err) == DLB_OK);
    for (size_t k = 0; k < 8 * 5; k++)
        CHECK_NEAR(oc[k], orf[k], 1e-4);
    const struct dlb_op_profile *ops;
    size_t n_ops = dlb_backend_profile(cpu, &ops);
    int seen = 0, seen_adds = 0, seen_conv_adds = 0, seen_dws = 0;
    for (size_t k = 0; k < n_ops; k++) {
        seen += ops[k].kind == DLB_OP_CONV2D_RELU;
        seen_adds += ops[k].kind == DLB_OP_ADD_RELU;
        seen_conv_adds += ops[k].kind == DLB_OP_CONV2D_ADD;
        seen_dws += ops[k].kind == DLB_OP_CONV2D_DW;
    }
    if (seen != fused || seen_adds != fused_adds ||
        seen_conv_adds != conv_adds || seen_dws != dws)
        fprintf(stderr, "%d fused convolutions, %d fused adds, %d "
                "convolutions with their adds and %d with their depthwise "
                "ones in inference, not %d, %d, %d and %d\n", seen,
                seen_adds, seen_conv_adds, seen_dws, fused, fused_adds,
                conv_adds, dws);
    CHECK(seen == fused && seen_adds == fused_adds &&
          seen_conv_adds == conv_adds && seen_dws == dws);
    dlb_model_destroy(mc);
    dlb_model_destroy(mr);
    dlb_backend_close(cpu);
}

/* bf16 everywhere but the logsoftmax: the adds cast what they read. */
static void test_mixed_precision(const struct dlb_model_spec *s)
{
    enum dlb_dtype types[DLB_LAYER_KIND_COUNT];
    struct dlb_error err = {""};
    float img[N * PER];
    int32_t lab[N];
    double l16 = NAN, l32 = NAN;
    for (int k = 0; k < DLB_LAYER_KIND_COUNT; k++)
        types[k] = k == DLB_LAYER_LOGSOFTMAX ? DLB_F32 : DLB_BF16;
    struct dlb_model *a = fx_make(s, ref, DLB_F32, 2);
    struct dlb_model *b = fx_make(s, ref, DLB_F32, 2);
    fx_random_batch(s, N, 8, img, lab);
    CHECK(dlb_model_set_precision(a, types, 1, &err) == DLB_OK);
    if (dlb_model_forward_backward(a, img, lab, N, 1, &l16, &err) != DLB_OK)
        fprintf(stderr, "%s\n", err.msg);
    CHECK(isfinite(l16));
    CHECK(dlb_model_forward_backward(b, img, lab, N, 1, &l32, &err) == 0);
    CHECK(isfinite(l16) && fabs(l16 - l32) <= 0.05 * fabs(l32));
    dlb_model_destroy(a);
    dlb_model_destroy(b);
}

struct seen_inputs {
    unsigned layer[16];
    size_t per[16];
    int n;
};

static dlb_status observe(void *ctx, unsigned layer, const float *x,
                          uint32_t n, size_t per_image)
{
    struct seen_inputs *o = ctx;
    (void)x;
    CHECK(n == N);
    if (o->n < 16) {
        o->layer[o->n] = layer;
        o->per[o->n++] = per_image;
    }
    return DLB_OK;
}

/* Calibration sees the input of each conv and linear layer (proj reads
 * the network's input, not the add before it) and the output. */
static void test_quant_observe(const struct dlb_model_spec *s)
{
    struct dlb_model *m = fx_make(s, ref, DLB_F32, 2);
    struct seen_inputs o = {{0}, {0}, 0};
    struct dlb_error err = {""};
    float img[N * PER];
    int32_t lab[N];
    const unsigned want_layer[] = {0, 3, 7, 11, 13};
    const size_t want_per[] = {128, 256, 128, 64, 5};
    fx_random_batch(s, N, 3, img, lab);
    CHECK(dlb_model_quant_observe(m, img, N, observe, &o, &err) == DLB_OK);
    CHECK(o.n == 5);
    for (int k = 0; k < 5 && k < o.n; k++)
        CHECK(o.layer[k] == want_layer[k] && o.per[k] == want_per[k]);
    dlb_model_destroy(m);
}

static void test_refusals(const struct dlb_model_spec *s)
{
    struct dlb_model *m = fx_make(s, ref, DLB_F32, 2);
    struct dlb_stage *st = NULL;
    struct dlb_error err = {""};
    struct dlb_prune_plan plan;
    const uint32_t keep[] = {0, 1};
    struct dlb_prune_keep sel = {0, keep, 2};
    if (!m)
        return;
    struct dlb_stage_spec cut = {3, 13, 1, 1.0f}, ok = {9, 13, 1, 1.0f};
    CHECK(dlb_model_stage_open(m, &cut, &st, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "before layer 'c2': layer 'proj' reads an output "
                          "from before it") != NULL);
    CHECK(dlb_model_stage_open(m, &ok, &st, &err) == DLB_OK);
    dlb_model_stage_close(st);
    /* c1 alone: its channels meet c2's at 'sum', which keeps them all */
    memset(&plan, 0, sizeof plan);
    CHECK(dlb_prune_plan_make(m, &sel, 1, &plan, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "layer 'sum' adds channels kept differently") &&
          strstr(err.msg, "'c1'"));
    /* c1, c2 and proj (the three meet at the adds) as one group: the adds
     * keep those channels, fc loses the matching inputs */
    struct dlb_prune_keep group[3] = {{0, keep, 2}, {3, keep, 2},
                                      {7, keep, 2}};
    CHECK(dlb_prune_plan_make(m, group, 3, &plan, &err) == DLB_OK);
    if (plan.spec) {
        CHECK(plan.n_out[5] == 2 && plan.n_out[8] == 2);
        CHECK(plan.spec->layers[11].in_c == 2 * 4 * 4);
        dlb_prune_plan_free(&plan);
    }
    dlb_model_destroy(m);
}

int main(void)
{
    struct dlb_backend_config cfg = {.seed = 1};
    char why[256];
    CHECK(dlb_backend_open("ref", &cfg, &ref, why, sizeof why) == DLB_OK);
    struct dlb_model_spec *s = fx_load_spec(RES);
    if (!ref || !s)
        return check_exit();
    test_gradients(s);
    test_no_leak(s);
    test_lifetimes(s);
    /* c1's and c2's batch norms fold: c1 then fuses its ReLU */
    test_cpu_matches_ref(s, 1, 1, 0, 0);
    test_mixed_precision(s);
    test_quant_observe(s);
    test_refusals(s);
    dlb_model_spec_free(s);
    /* convolutions and their ReLUs fused in inference (CONV2D_RELU on
     * both backends), one of them read twice */
    s = fx_load_spec(CONV_RELU);
    CHECK(s != NULL);
    if (s) {
        test_cpu_matches_ref(s, 3, 1, 0, 0);
        dlb_model_spec_free(s);
    }
    /* convolutions summed onto the other branch of an add (CONV2D_ADD),
     * where that branch is read by nothing after */
    s = fx_load_spec(CONV_ADD);
    CHECK(s != NULL);
    if (s) {
        test_cpu_matches_ref(s, 3, 1, 2, 0);
        test_fused_as_trained(s);
        test_no_leak(s);
        dlb_model_spec_free(s);
    }
    /* a 1x1 convolution and the depthwise one after it, with their
     * ReLUs, as one operation (CONV2D_DW), where the 1x1's output goes
     * nowhere else */
    s = fx_load_spec(CONV_DW);
    CHECK(s != NULL);
    if (s) {
        test_cpu_matches_ref(s, 1, 0, 0, 2);
        test_fused_as_trained(s);
        test_no_leak(s);
        dlb_model_spec_free(s);
    }
    dlb_backend_close(ref);
    return check_exit();
}
