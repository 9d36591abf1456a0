/* int8 inference on residual and depthwise networks (core/model/
 * model_quant*.c), random inputs and weights:
 * - a depthwise conv, a ReLU6, a pointwise conv, a residual add of the
 *   network's input and a ReLU, recomputed here from the documented
 *   arithmetic (model_api.h: u8 activations, per-channel s8 weights, int32
 *   biases in accumulator units): with the pointwise input calibrated on
 *   the clipped values the ReLU6 fuses and the depthwise layer hands int8
 *   data on (requantised with the pointwise input scale); with that range
 *   widened past 6 the ReLU6 runs in fp32 and the data leaves the
 *   depthwise layer in fp32. Either way the levels the pointwise layer
 *   gets are within one of this file's (at most 2% off by one, where a
 *   float rounding lands on the other side of .5), and the pointwise
 *   output is fp32 into the add, since the add reads the network's input
 *   too; from the levels seen, the log-probabilities within 1e-4, on ref
 *   and on cpu;
 * - ResNet-20 and MobileNetV2 at 32x32: every conv (the depthwise ones
 *   too) and the classifier run in int8, every batch norm folded,
 *   MobileNetV2's ReLU6s fused where they feed an int8 layer; the int8
 *   model on cpu against the same on ref within 1e-4 on log-probabilities
 *   with the same argmax (as test_quant_model: every int8 kernel is exact,
 *   and the adds sum the same fp32 values; measured 0); against the fp32
 *   model SQNR of the centred log-probabilities above 20 dB (measured 44
 *   on ResNet-20, 39 on MobileNetV2); inference on cpu fuses each int8
 *   conv with the residual add after it (CONV2D_INT8_ADD) and gives what
 *   the layers apart give (an observation pass) within 1e-4 (measured
 *   0). */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "model/model.h"
#include "model/model_impl.h"
#include "model/model_quant.h"
#include "util/rng.h"

#define N 4
#define MAXL 256

static const char *srcdir;

static struct dlb_backend *open_be(const char *name)
{
    struct dlb_backend *be = NULL;
    char why[256];
    if (dlb_backend_open(name, NULL, &be, why, sizeof why) != DLB_OK) {
        fprintf(stderr, "backend %s: %s (skipped)\n", name, why);
        return NULL;
    }
    if (strcmp(name, "ref") &&
        DLB_BE_CALL(be, supports, DLB_CAP_INT8, why, sizeof why)) {
        fprintf(stderr, "%s int8 cases skipped: %s\n", name, why);
        dlb_backend_close(be);
        return NULL;
    }
    return be;
}

/* Ranges of every conv and linear input, and the last observation of
 * one layer's input (`keep`) as the model dequantised it. */
struct obs {
    float lo[MAXL], hi[MAXL];
    unsigned keep;
    float *kept;
    size_t kept_count;
};

static dlb_status observe_fn(void *ctx, unsigned layer, const float *x,
                             uint32_t n, size_t per)
{
    struct obs *o = ctx;
    size_t count = (size_t)n * per;
    if (layer >= MAXL)
        return DLB_OK;
    float lo = 0.0f, hi = 0.0f;
    for (size_t k = 0; k < count; k++) {
        lo = x[k] < lo ? x[k] : lo;
        hi = x[k] > hi ? x[k] : hi;
    }
    o->lo[layer] = lo;
    o->hi[layer] = hi;
    if (layer == o->keep) {
        free(o->kept);
        o->kept = malloc(count * sizeof *o->kept);
        memcpy(o->kept, x, count * sizeof *x);
        o->kept_count = count;
    }
    return DLB_OK;
}

/* u8 minmax activations, per-channel s8 weights, as the plugin makes. */
static struct dlb_quant_layer *settings(struct dlb_model *m,
                                        const float *img, struct obs *o)
{
    const struct dlb_model_spec *sp = dlb_model_spec_of(m);
    struct dlb_error err = {""};
    struct dlb_quant_layer *q = calloc(sp->n_layers, sizeof *q);
    CHECK(dlb_model_quant_observe(m, img, N, observe_fn, o, &err) == DLB_OK);
    for (size_t i = 0; i < sp->n_layers; i++) {
        const struct dlb_layer_spec *L = &sp->layers[i];
        q[i].act_type = DLB_F32;
        if (L->kind != DLB_LAYER_CONV && L->kind != DLB_LAYER_LINEAR)
            continue;
        size_t wn = L->kind == DLB_LAYER_CONV
                        ? (size_t)L->out_c * (L->in_c / L->groups) *
                              L->size * L->size
                        : (size_t)L->out_c * L->in_c;
        float *w = malloc(wn * sizeof *w), *b = malloc(L->out_c * sizeof *b);
        float *sc = malloc(L->out_c * sizeof *sc);
        CHECK(dlb_model_quant_weights(m, i, w, wn, b, L->out_c, &err) ==
              DLB_OK);
        for (uint32_t c = 0; c < L->out_c; c++) {
            double a = 0;
            for (size_t k = 0; k < wn / L->out_c; k++)
                a = fmax(a, fabs(w[c * (wn / L->out_c) + k]));
            sc[c] = a > 0 ? (float)(a / 127) : 1.0f;
        }
        q[i].act_type = DLB_U8;
        q[i].act_scale = (o->hi[i] - o->lo[i]) / 255.0f;
        q[i].act_zero_point = (int32_t)nearbyint(-o->lo[i] / q[i].act_scale);
        q[i].w_scale = sc;
        q[i].n_w_scale = L->out_c;
        free(w);
        free(b);
    }
    return q;
}

static void free_settings(struct dlb_quant_layer *q, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free((void *)q[i].w_scale);
    free(q);
}

static float *get(struct dlb_model *m, const char *name, size_t n)
{
    struct dlb_error err = {""};
    float *v = malloc(n * sizeof *v);
    CHECK(dlb_model_tensor_io(m, name, v, n, 0, &err) == DLB_OK);
    return v;
}

static int32_t quantize(double x, double scale, int32_t zp)
{
    double q = nearbyint(x / scale) + zp;
    return q < 0 ? 0 : q > 255 ? 255 : (int32_t)q;
}

/* ---- the small residual block, recomputed ---------------------------- */

#define C 2
#define H 6
#define HW (H * H)
#define FEAT (C * HW)

static const char block[] =
    "[net]\ninput = 2x6x6\nclasses = 72\nloss = cross_entropy\n"
    "[dw]\ntype = conv\nfilters = 2\nsize = 3\npad = 1\ngroups = 2\n"
    "[clip]\ntype = relu\nmax = 6\n"
    "[pw]\ntype = conv\nfilters = 2\nsize = 1\n"
    "[sum]\ntype = add\ninput = pw, net\n"
    "[relu]\ntype = relu\n"
    "[flat]\ntype = flatten\n";

/* Per-channel s8 weights and the int32 bias, as the model quantises. */
static void qweights(const float *w, const float *b, size_t per,
                     const float *sw, float sx, int32_t *qw, int32_t *qb)
{
    for (uint32_t c = 0; c < C; c++) {
        for (size_t k = 0; k < per; k++) {
            double v = nearbyint(w[c * per + k] / sw[c]);
            qw[c * per + k] = (int32_t)(v < -127 ? -127 : v > 127 ? 127 : v);
        }
        qb[c] = (int32_t)nearbyint(b[c] / ((double)sx * sw[c]));
    }
}

/* `widen` scales pw's input range: 1 keeps the calibrated one (the ReLU6
 * fuses: the highest level is at 6 or below), 2 puts levels above 6 (the
 * ReLU6 runs in fp32, dw hands fp32 on). */
static void test_block(struct dlb_backend *be, float widen)
{
    struct dlb_model_spec *sp = NULL;
    struct dlb_model *m = NULL;
    struct dlb_error err = {""};
    struct dlb_rng r;
    struct obs o = {.keep = 2};
    float img[N * FEAT], lp[N * FEAT];
    CHECK(dlb_model_file_parse("block.ini", block, sizeof block - 1, &sp,
                               &err) == DLB_OK);
    CHECK(dlb_model_create(sp, be, DLB_F32, 3, &m, &err) == DLB_OK);
    if (!m) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    dlb_rng_seed(&r, 5);
    /* wide inputs: dw's output crosses 6, where the clip matters */
    for (size_t k = 0; k < N * FEAT; k++)
        img[k] = 4.0f * (float)dlb_rng_normal(&r);
    float *w1 = get(m, "dw.weight", C * 9), *b1 = get(m, "dw.bias", C);
    float *w2 = get(m, "pw.weight", C * C), *b2 = get(m, "pw.bias", C);
    struct dlb_quant_layer *q = settings(m, img, &o);
    struct dlb_quant_summary sum;
    q[2].act_scale *= widen;
    CHECK(dlb_model_quant_apply(m, q, sp->n_layers, &sum, &err) == DLB_OK);
    CHECK(sum.int8_layers == 2 && sum.int8_outputs == (widen == 1.0f));
    /* the levels pw receives, and the output */
    CHECK(dlb_model_quant_observe(m, img, N, observe_fn, &o, &err) == DLB_OK);
    CHECK(dlb_model_infer(m, img, N, lp, &err) == DLB_OK);
    float s1 = q[0].act_scale, s2 = q[2].act_scale;
    int32_t z1 = q[0].act_zero_point, z2 = q[2].act_zero_point;
    int32_t qw1[C * 9], qb1[C], qw2[C * C], qb2[C];
    qweights(w1, b1, 9, q[0].w_scale, s1, qw1, qb1);
    qweights(w2, b2, C, q[2].w_scale, s2, qw2, qb2);
    unsigned off_by_one = 0, worse = 0, clipped = 0;
    double worst = 0;
    for (int n = 0; n < N && o.kept_count == (size_t)N * FEAT; n++) {
        const float *x = img + n * FEAT;
        int32_t lv[FEAT];
        double y[FEAT], mx = -INFINITY, se = 0;
        for (int c = 0; c < C; c++)
            for (int i = 0; i < H; i++)
                for (int j = 0; j < H; j++) {
                    int64_t acc = 0;
                    for (int a = -1; a <= 1; a++)
                        for (int b = -1; b <= 1; b++) {
                            int ii = i + a, jj = j + b;
                            if (ii < 0 || jj < 0 || ii >= H || jj >= H)
                                continue; /* padding is the real 0 */
                            acc += (int64_t)(quantize(x[c * HW + ii * H + jj],
                                                      s1, z1) - z1) *
                                   qw1[c * 9 + (a + 1) * 3 + b + 1];
                        }
                    float v = ((float)acc + (float)qb1[c]) *
                              (s1 * q[0].w_scale[c]);
                    clipped += v > 6.0f;
                    v = v < 0.0f ? 0.0f : v > 6.0f ? 6.0f : v; /* ReLU6 */
                    int32_t mine = quantize(v, s2, z2);
                    size_t e = (size_t)n * FEAT + c * HW + i * H + j;
                    /* the level of what pw got: int8 data
                     * dequantised, or fp32 it quantises itself */
                    int32_t seen = quantize(o.kept[e], s2, z2);
                    off_by_one += abs(seen - mine) == 1;
                    worse += abs(seen - mine) > 1;
                    lv[c * HW + i * H + j] = seen;
                }
        for (int c = 0; c < C; c++)
            for (int p = 0; p < HW; p++) {
                int64_t acc = 0;
                for (int k = 0; k < C; k++)
                    acc += (int64_t)(lv[k * HW + p] - z2) * qw2[c * C + k];
                float v = ((float)acc + (float)qb2[c]) *
                          (s2 * q[2].w_scale[c]);
                double s = (double)v + x[c * HW + p];
                y[c * HW + p] = s > 0 ? s : 0;
                mx = fmax(mx, y[c * HW + p]);
            }
        for (int k = 0; k < FEAT; k++)
            se += exp(y[k] - mx);
        for (int k = 0; k < FEAT; k++)
            worst = fmax(worst, fabs(y[k] - mx - log(se) - lp[n * FEAT + k]));
    }
    fprintf(stderr, "%s block, ReLU6 %s: %u of %d levels off by one, %u "
            "worse; log-probs within %.3g\n", dlb_backend_name(be),
            widen == 1.0f ? "fused" : "in fp32", off_by_one, N * FEAT, worse,
            worst);
    CHECK(o.kept_count == (size_t)N * FEAT);
    CHECK(worse == 0 && off_by_one <= N * FEAT / 50);
    CHECK(clipped > 0); /* the clip was exercised */
    CHECK(worst <= 1e-4);
    free(o.kept);
    free(w1);
    free(b1);
    free(w2);
    free(b2);
    free_settings(q, sp->n_layers);
    dlb_model_destroy(m);
    dlb_model_spec_free(sp);
}

/* ---- ResNet-20 and MobileNetV2 --------------------------------------- */

static void shake_bn(struct dlb_model *m, const struct dlb_model_spec *sp)
{
    struct dlb_error err = {""};
    struct dlb_rng r;
    static const char *const t[4] = {"weight", "bias", "running_mean",
                                     "running_var"};
    dlb_rng_seed(&r, 17);
    for (size_t i = 0; i < sp->n_layers; i++) {
        const struct dlb_layer_spec *L = &sp->layers[i];
        if (L->kind != DLB_LAYER_BATCHNORM)
            continue;
        float *v = malloc(L->in_c * sizeof *v);
        for (int k = 0; k < 4; k++) {
            char name[96];
            for (uint32_t c = 0; c < L->in_c; c++) {
                double u = dlb_rng_double(&r);
                v[c] = (float)(k == 0 || k == 3 ? 0.5 + 1.5 * u
                                                : 0.4 * (u - 0.5));
            }
            snprintf(name, sizeof name, "%s.%s", L->name, t[k]);
            CHECK(dlb_model_tensor_io(m, name, v, L->in_c, 1, &err) == DLB_OK);
        }
        free(v);
    }
}

static float *infer(struct dlb_model *m, const float *img, uint32_t classes)
{
    struct dlb_error err = {""};
    float *lp = malloc(N * classes * sizeof *lp);
    dlb_status s = dlb_model_infer(m, img, N, lp, &err);
    if (s != DLB_OK)
        fprintf(stderr, "infer: %s\n", err.msg);
    CHECK(s == DLB_OK);
    return lp;
}

static double sqnr(const float *ref, const float *x, uint32_t cols)
{
    double s = 0, e = 0;
    for (size_t i = 0; i < N; i++) {
        double mr = 0, mx = 0;
        for (uint32_t k = 0; k < cols; k++) {
            mr += ref[i * cols + k] / cols;
            mx += x[i * cols + k] / cols;
        }
        for (uint32_t k = 0; k < cols; k++) {
            double a = ref[i * cols + k] - mr, b = x[i * cols + k] - mx;
            s += a * a;
            e += (b - a) * (b - a);
        }
    }
    return e > 0 ? 10 * log10(s / e) : 300;
}

static void test_net(struct dlb_backend *ref, struct dlb_backend *cpu,
                     const char *model)
{
    char path[1024];
    struct dlb_model_spec *sp = NULL;
    struct dlb_model *mr = NULL;
    struct dlb_error err = {""};
    struct dlb_quant_summary sum;
    struct obs o = {.keep = MAXL};
    struct dlb_rng r;
    snprintf(path, sizeof path, "%s/suites/models/%s.ini", srcdir, model);
    CHECK(dlb_model_file_load(path, &sp, &err) == DLB_OK);
    CHECK(sp && sp->n_layers < MAXL);
    if (!sp || dlb_model_create(sp, ref, DLB_F32, 5, &mr, &err) != DLB_OK) {
        fprintf(stderr, "%s\n", err.msg);
        CHECK(0);
        return;
    }
    size_t per = (size_t)sp->in_c * sp->in_h * sp->in_w;
    float *img = malloc(N * per * sizeof *img);
    dlb_rng_seed(&r, 11);
    for (size_t k = 0; k < N * per; k++)
        img[k] = (float)dlb_rng_normal(&r);
    shake_bn(mr, sp);
    unsigned matmul = 0, bn = 0, dw = 0, adds = 0;
    for (size_t i = 0; i < sp->n_layers; i++) {
        const struct dlb_layer_spec *L = &sp->layers[i];
        adds += L->kind == DLB_LAYER_ADD;
        matmul += L->kind == DLB_LAYER_CONV || L->kind == DLB_LAYER_LINEAR;
        bn += L->kind == DLB_LAYER_BATCHNORM;
        dw += L->kind == DLB_LAYER_CONV && L->groups > 1;
    }
    float *fp32 = infer(mr, img, sp->classes);
    struct dlb_quant_layer *q = settings(mr, img, &o);
    CHECK(dlb_model_quant_apply(mr, q, sp->n_layers, &sum, &err) == DLB_OK);
    CHECK(sum.int8_layers == matmul && sum.folded == bn);
    float *int8_ref = infer(mr, img, sp->classes);
    double db = sqnr(fp32, int8_ref, sp->classes);
    fprintf(stderr, "%s: %u int8 layers (%u depthwise), %u folded, %u int8 "
            "outputs; int8 vs fp32 SQNR %.1f dB\n", model, sum.int8_layers,
            dw, sum.folded, sum.int8_outputs, db);
    CHECK(db > 20.0);
    /* MobileNetV2: each expand conv and each depthwise conv hands int8 on
     * through its ReLU6 (the fusion is exact: calibrated on [0, 6]) */
    CHECK(sum.int8_outputs >= 2 * dw);
    struct dlb_model *mc = NULL;
    if (cpu && dlb_model_create(sp, cpu, DLB_F32, 5, &mc, &err) == DLB_OK) {
        shake_bn(mc, sp);
        CHECK(dlb_model_quant_apply(mc, q, sp->n_layers, NULL, &err) ==
              DLB_OK);
        float *int8_cpu = infer(mc, img, sp->classes);
        double worst = 0;
        int same = 1;
        for (size_t i = 0; i < N; i++) {
            uint32_t a = 0, b = 0;
            for (uint32_t k = 0; k < sp->classes; k++) {
                size_t j = i * sp->classes + k;
                worst = fmax(worst, fabs(int8_cpu[j] - int8_ref[j]));
                a = int8_ref[j] > int8_ref[i * sp->classes + a] ? k : a;
                b = int8_cpu[j] > int8_cpu[i * sp->classes + b] ? k : b;
            }
            same &= a == b;
        }
        fprintf(stderr, "%s: cpu int8 vs ref int8: max |diff| %.3g\n", model,
                worst);
        CHECK(worst <= 1e-4 && same);
        /* Inference fused each int8 conv with the residual add after it
         * (CONV2D_INT8_ADD, onto the other branch's buffer), where an
         * observation pass runs them apart: the same log-probabilities
         * but for the sum's order of float roundings. */
        CHECK(mc->fused_layers >= adds);
        struct obs apart = {.keep = (unsigned)sp->n_layers};
        CHECK(dlb_model_quant_observe(mc, img, N, observe_fn, &apart, &err) ==
              DLB_OK);
        double gap = 0;
        for (size_t j = 0; apart.kept && j < N * sp->classes; j++)
            gap = fmax(gap, fabs(apart.kept[j] - int8_cpu[j]));
        fprintf(stderr, "%s: %zu layers fused on cpu, %u adds; fused vs "
                "apart: max |diff| %.3g\n", model, mc->fused_layers, adds,
                gap);
        CHECK(apart.kept && apart.kept_count == N * sp->classes &&
              gap <= 1e-4);
        free(apart.kept);
        free(int8_cpu);
        dlb_model_destroy(mc);
    }
    free(int8_ref);
    free(fp32);
    free(img);
    free_settings(q, sp->n_layers);
    dlb_model_destroy(mr);
    dlb_model_spec_free(sp);
}

int main(void)
{
    srcdir = getenv("srcdir");
    if (!srcdir || !*srcdir)
        srcdir = ".";
    struct dlb_backend *ref = open_be("ref"), *cpu = open_be("cpu");
    CHECK(ref != NULL);
    if (!ref)
        return check_exit();
    for (float widen = 1.0f; widen <= 2.0f; widen += 1.0f) {
        test_block(ref, widen);
        if (cpu)
            test_block(cpu, widen);
    }
    test_net(ref, cpu, "resnet20");
    test_net(ref, cpu, "mobilenet-v2-32");
    dlb_backend_close(cpu);
    dlb_backend_close(ref);
    return check_exit();
}
