/* The model's int8 path (core/model/model_quant*.c) on LeNet and
 * vgg-small, with batch-norm statistics and affine parameters set to
 * values far from their initial ones, so that a wrong fold shows:
 * - the plan: LeNet keeps int8 from conv1 to fc2 (three requantised
 *   outputs, one input quantisation); vgg-small folds its five batch
 *   norms and keeps int8 from conv1 to conv5 (four requantised outputs),
 *   the global average pool and the head taking fp32;
 * - model size: int8 weights, int32 biases, fp32 scales: LeNet at
 *   exactly the bytes the summary's comment adds up (ratio 0.26);
 * - the int8 model on the cpu backend against the same on ref (the
 *   fake-quant oracle): log-probabilities within 1e-4 (every layer is
 *   exact in practice, test_quant_ops), the same argmax everywhere;
 * - the int8 model against the fp32 model (minmax-calibrated on the same
 *   images): SQNR of the centred log-probabilities above 25 dB (measured
 *   39 on LeNet, 42 on vgg-small; a fold with beta's sign flipped gives
 *   5), so folding, fusion and requantisation mean the fp32 network;
 * - observe sees every conv and linear input and the output, in order;
 * - training through an int8 layer is refused; clear gives back the fp32
 *   outputs bit for bit;
 * - bad settings are refused with the layer named: int8 on a pooling
 *   layer, a wrong number of weight scales, an s8 zero point. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "model/model.h"
#include "model/model_quant.h"
#include "util/rng.h"

#define N 8

static struct dlb_model_spec *spec;
static const char *srcdir;
static float img[N * 784];

static struct dlb_backend *open_be(const char *name)
{
    struct dlb_backend *be = NULL;
    char why[256];
    if (dlb_backend_open(name, NULL, &be, why, sizeof why) != DLB_OK)
        fprintf(stderr, "backend %s: %s\n", name, why);
    return be;
}

/* A model with the seed's weights and batch norms that do something. */
static struct dlb_model *make(struct dlb_backend *be)
{
    struct dlb_model *m = NULL;
    struct dlb_error err = {""};
    struct dlb_rng r;
    if (dlb_model_create(spec, be, DLB_F32, 5, &m, &err) != DLB_OK) {
        fprintf(stderr, "%s\n", err.msg);
        CHECK(0);
        return NULL;
    }
    dlb_rng_seed(&r, 17);
    for (size_t i = 0; i < spec->n_layers; i++) {
        const struct dlb_layer_spec *L = &spec->layers[i];
        if (L->kind != DLB_LAYER_BATCHNORM)
            continue;
        static const char *const t[4] = { "weight", "bias", "running_mean",
                                          "running_var" };
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
    return m;
}

static float *infer(struct dlb_model *m)
{
    struct dlb_error err = {""};
    float *lp = malloc(N * spec->classes * sizeof *lp);
    dlb_status s = dlb_model_infer(m, img, N, lp, &err);
    if (s != DLB_OK)
        fprintf(stderr, "infer: %s\n", err.msg);
    CHECK(s == DLB_OK);
    return lp;
}

/* minmax ranges of every conv and linear input, from observe. */
struct ranges {
    float lo[64], hi[64];
    unsigned seen[65], calls;
};

static dlb_status observe_fn(void *ctx, unsigned layer, const float *x,
                             uint32_t n, size_t per)
{
    struct ranges *r = ctx;
    if (layer > spec->n_layers)
        return DLB_ERR_INTERNAL;
    r->seen[r->calls++ % 65] = layer;
    if (layer == spec->n_layers)
        return DLB_OK;
    float lo = 0.0f, hi = 0.0f;
    for (size_t k = 0; k < (size_t)n * per; k++) {
        lo = x[k] < lo ? x[k] : lo;
        hi = x[k] > hi ? x[k] : hi;
    }
    r->lo[layer] = lo;
    r->hi[layer] = hi;
    return DLB_OK;
}

/* u8 asymmetric minmax activations, per-channel s8 weights. */
static struct dlb_quant_layer *settings(struct dlb_model *m, struct ranges *r)
{
    struct dlb_error err = {""};
    struct dlb_quant_layer *q = calloc(spec->n_layers, sizeof *q);
    memset(r, 0, sizeof *r);
    CHECK(dlb_model_quant_observe(m, img, N, observe_fn, r, &err) ==
          DLB_OK);
    for (size_t i = 0; i < spec->n_layers; i++) {
        const struct dlb_layer_spec *L = &spec->layers[i];
        q[i].act_type = DLB_F32;
        if (L->kind != DLB_LAYER_CONV && L->kind != DLB_LAYER_LINEAR)
            continue;
        size_t wn = L->kind == DLB_LAYER_CONV
                        ? (size_t)L->out_c * L->in_c * L->size * L->size
                        : (size_t)L->out_c * L->in_c;
        float *w = malloc(wn * sizeof *w), *b = malloc(L->out_c * sizeof *b);
        float *sc = malloc(L->out_c * sizeof *sc);
        CHECK(dlb_model_quant_weights(m, i, w, wn, b, L->out_c, &err) ==
              DLB_OK);
        for (uint32_t o = 0; o < L->out_c; o++) {
            double a = 0;
            for (size_t k = 0; k < wn / L->out_c; k++)
                a = fmax(a, fabs(w[o * (wn / L->out_c) + k]));
            sc[o] = a > 0 ? (float)(a / 127) : 1.0f;
        }
        q[i].act_type = DLB_U8;
        q[i].act_scale = (r->hi[i] - r->lo[i]) / 255.0f;
        q[i].act_zero_point = (int32_t)nearbyint(-r->lo[i] / q[i].act_scale);
        q[i].w_scale = sc;
        q[i].n_w_scale = L->out_c;
        free(w);
        free(b);
    }
    return q;
}

static void free_settings(struct dlb_quant_layer *q)
{
    for (size_t i = 0; i < spec->n_layers; i++)
        free((void *)q[i].w_scale);
    free(q);
}

/* SQNR of x against ref, each row of log-probabilities centred first:
 * a near-uniform row is a constant the error would otherwise hide in. */
static double sqnr(const float *ref, const float *x, size_t rows,
                   uint32_t cols)
{
    double s = 0, e = 0;
    for (size_t i = 0; i < rows; i++) {
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

static void test_model(struct dlb_backend *ref, struct dlb_backend *cpu,
                       const struct dlb_quant_summary *want, double min_db)
{
    struct dlb_error err = {""};
    struct dlb_quant_summary sum;
    struct ranges r;
    size_t nc = N * spec->classes;
    struct dlb_model *mr = make(ref);
    if (!mr)
        return;
    float *fp32 = infer(mr);
    struct dlb_quant_layer *q = settings(mr, &r);
    /* observe: every conv/linear input, then the output, in order */
    unsigned last = 0, order_ok = 1;
    for (unsigned k = 0; k < r.calls; k++) {
        order_ok &= k == 0 || r.seen[k] > last;
        last = r.seen[k];
    }
    CHECK(order_ok && last == spec->n_layers);
    dlb_status s = dlb_model_quant_apply(mr, q, spec->n_layers, &sum, &err);
    if (s != DLB_OK)
        fprintf(stderr, "apply: %s\n", err.msg);
    CHECK(s == DLB_OK);
    CHECK(sum.int8_layers == want->int8_layers);
    CHECK(sum.int8_outputs == want->int8_outputs);
    CHECK(sum.folded == want->folded);
    CHECK(sum.input_quantize == want->input_quantize);
    uint64_t elems = 0;
    for (size_t k = 0; k < dlb_model_n_tensors(mr); k++)
        elems += dlb_model_tensor_at(mr, k)->count;
    CHECK(sum.fp32_bytes == 4 * elems);
    if (want->int8_bytes)
        CHECK(sum.int8_bytes == want->int8_bytes);
    CHECK((double)sum.int8_bytes / (double)sum.fp32_bytes < 0.3);
    float *int8_ref = infer(mr);
    double db = sqnr(fp32, int8_ref, N, spec->classes);
    fprintf(stderr, "%s: int8 vs fp32 log-probs SQNR %.1f dB, size %llu -> "
            "%llu bytes\n", spec->path, db,
            (unsigned long long)sum.fp32_bytes,
            (unsigned long long)sum.int8_bytes);
    CHECK(db > min_db);
    if (cpu) {
        struct dlb_model *mc = make(cpu);
        CHECK(dlb_model_quant_apply(mc, q, spec->n_layers, NULL, &err) ==
              DLB_OK);
        float *int8_cpu = infer(mc);
        double worst = 0;
        int same_argmax = 1;
        for (size_t i = 0; i < N; i++) {
            uint32_t a = 0, b = 0;
            for (uint32_t k = 0; k < spec->classes; k++) {
                size_t j = i * spec->classes + k;
                worst = fmax(worst, fabs(int8_cpu[j] - int8_ref[j]));
                a = int8_ref[j] > int8_ref[i * spec->classes + a] ? k : a;
                b = int8_cpu[j] > int8_cpu[i * spec->classes + b] ? k : b;
            }
            same_argmax &= a == b;
        }
        fprintf(stderr, "%s: cpu int8 vs ref int8: max |diff| %.3g\n",
                spec->path, worst);
        CHECK(worst <= 1e-4);
        CHECK(same_argmax);
        free(int8_cpu);
        dlb_model_destroy(mc);
    }
    /* no training through int8 layers; clear restores fp32 exactly */
    int32_t lab[N] = { 0 };
    CHECK(dlb_model_forward_backward(mr, img, lab, N, 1.0f, NULL, &err) ==
          DLB_ERR_UNSUPPORTED);
    dlb_model_quant_clear(mr);
    float *again = infer(mr);
    CHECK(memcmp(again, fp32, nc * sizeof *again) == 0);
    free(again);
    free(int8_ref);
    free(fp32);
    free_settings(q);
    dlb_model_destroy(mr);
}

static void test_bad(struct dlb_backend *be)
{
    struct dlb_error err = {""};
    struct ranges r;
    struct dlb_model *m = make(be);
    struct dlb_quant_layer *q = settings(m, &r);
    size_t pool = 1; /* lenet: pool1 */
    q[pool].act_type = DLB_U8;
    q[pool].act_scale = 1.0f;
    CHECK(dlb_model_quant_apply(m, q, spec->n_layers, NULL, &err) ==
          DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "pool1") && strstr(err.msg, "cannot run in int8"));
    q[pool].act_type = DLB_F32;
    q[0].n_w_scale = 3;
    CHECK(dlb_model_quant_apply(m, q, spec->n_layers, NULL, &err) ==
          DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "conv1") && strstr(err.msg, "3 weight scales"));
    q[0].n_w_scale = 1;
    q[0].act_type = DLB_S8;
    q[0].act_zero_point = 5;
    CHECK(dlb_model_quant_apply(m, q, spec->n_layers, NULL, &err) ==
          DLB_ERR_INPUT);
    CHECK(dlb_model_quant_apply(m, q, 3, NULL, &err) == DLB_ERR_INPUT);
    free_settings(q);
    dlb_model_destroy(m);
}

static int load(const char *model)
{
    char path[1024];
    struct dlb_error err = {""};
    struct dlb_rng r;
    dlb_model_spec_free(spec);
    snprintf(path, sizeof path, "%s/suites/models/%s.ini", srcdir, model);
    if (dlb_model_file_load(path, &spec, &err) != DLB_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    dlb_rng_seed(&r, 11);
    for (size_t i = 0; i < N * 784; i++)
        img[i] = (float)dlb_rng_normal(&r);
    return 0;
}

int main(void)
{
    srcdir = getenv("srcdir");
    if (!srcdir || !*srcdir)
        srcdir = ".";
    struct dlb_backend *ref = open_be("ref"), *cpu = open_be("cpu");
    char why[256] = "";
    if (cpu && DLB_BE_CALL(cpu, supports, DLB_CAP_INT8, why, sizeof why)) {
        fprintf(stderr, "cpu int8 cases skipped: %s\n", why);
        dlb_backend_close(cpu);
        cpu = NULL;
    }
    CHECK(ref != NULL);
    if (!ref || load("lenet"))
        return 1;
    /* 21750 int8 weights + 90 int32 biases + 90 fp32 scales + 4 x 8 */
    struct dlb_quant_summary lenet = { 4, 3, 0, 1, 0, 21750 + 360 + 360 + 32 };
    test_model(ref, cpu, &lenet, 25.0);
    test_bad(ref);
    if (load("vgg-small"))
        return 1;
    struct dlb_quant_summary vgg = { 6, 4, 5, 2, 0, 0 };
    test_model(ref, cpu, &vgg, 25.0);
    dlb_model_spec_free(spec);
    dlb_backend_close(cpu);
    dlb_backend_close(ref);
    return check_exit();
}
