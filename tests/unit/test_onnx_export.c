/* ONNX export (core/model/onnx_write*.c), read back by dlbench's own
 * importer: LeNet, ResNet-20 (residual adds) and MobileNetV2-32
 * (depthwise convolutions, ReLU6, adds) from suites/models/, every tensor
 * random (batch-norm running variances in [0.5, 1.5]) and random inputs,
 * give on ref the same log-probabilities as the model written, within
 * 1e-5 * max(1, |x|) (the same fp32 operations in the same order: the
 * bound only allows for a batch norm the importer reads as ONNX states
 * it). A LeNet whose first convolution was pruned to half its filters
 * (rebuilt smaller) is written and read back as the smaller network, and a
 * pruning mask's zeros are in the file. An int8 LeNet (calibrated scales,
 * per channel) is written in the QDQ form and read back simulated in fp32
 * (quantise-dequantise), its log-probabilities within 1e-3 of the int8
 * model's (which requantises from its int32 accumulator). A QDQ pair
 * before a Conv becomes its input quantisation; pairs whose scales differ
 * or that feed another operator are refused naming the node. Writing into
 * a folder that does not exist fails naming the file and leaves nothing. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "model/model.h"
#include "model/model_prune.h"
#include "model/model_quant.h"
#include "model/onnx_write.h"
#include "model/onnx_write_impl.h"
#include "util/rng.h"

#define TOL 1e-5
#define BATCH 3

static const char *srcdir;
static char tmpdir[256];

static struct dlb_model_spec *load_ini(const char *name)
{
    char path[1200];
    struct dlb_error err = {""};
    struct dlb_model_spec *s = NULL;
    snprintf(path, sizeof path, "%s/suites/models/%s.ini", srcdir, name);
    if (dlb_model_file_load(path, &s, &err) != DLB_OK)
        fprintf(stderr, "%s\n", err.msg);
    return s;
}

/* Every tensor random, never zero: weights in +-0.5 (variances positive). */
static void randomise(struct dlb_model *m, uint64_t seed)
{
    struct dlb_rng r;
    struct dlb_error err = {""};
    dlb_rng_seed(&r, seed);
    for (size_t i = 0; i < dlb_model_n_tensors(m); i++) {
        const struct dlb_model_tensor *t = dlb_model_tensor_at(m, i);
        float *v = malloc(t->count * sizeof *v);
        int var = strstr(t->name, "running_var") != NULL;
        for (size_t k = 0; v && k < t->count; k++)
            v[k] = var ? 0.5f + dlb_rng_float(&r)
                       : (dlb_rng_float(&r) - 0.5f) * (strstr(t->name, "mean") ? 0.2f : 1.0f);
        CHECK(v && dlb_model_tensor_io(m, t->name, v, t->count, 1, &err) == DLB_OK);
        free(v);
    }
    dlb_model_weights_changed(m);
}

static float *random_input(const struct dlb_model_spec *sp, uint64_t seed)
{
    size_t n = (size_t)BATCH * sp->in_c * sp->in_h * sp->in_w;
    float *x = malloc(n * sizeof *x);
    struct dlb_rng r;
    dlb_rng_seed(&r, seed);
    for (size_t k = 0; x && k < n; k++)
        x[k] = (float)dlb_rng_normal(&r);
    return x;
}

/* Write m, read it back on be, and compare the log-probabilities of x
 * within tol; the read-back spec in *back when not NULL (caller frees). */
static void round_trip(struct dlb_model *m, struct dlb_backend *be,
                       const float *x, double tol, const char *what,
                       struct dlb_model_spec **back)
{
    char path[512];
    struct dlb_error err = {""};
    struct dlb_model_spec *sp2 = NULL;
    struct dlb_model *m2 = NULL;
    const struct dlb_model_spec *sp = dlb_model_spec_of(m);
    size_t nout = (size_t)BATCH * sp->classes;
    float *a = malloc(nout * sizeof *a), *b = malloc(nout * sizeof *b);
    snprintf(path, sizeof path, "%s/%s.onnx", tmpdir, what);
    dlb_status s = dlb_onnx_write_model(m, path, &err);
    if (s != DLB_OK)
        fprintf(stderr, "%s: %s\n", what, err.msg);
    CHECK(s == DLB_OK);
    s = s ? s : dlb_model_file_load(path, &sp2, &err);
    s = s ? s : dlb_model_create(sp2, be, DLB_F32, 99, &m2, &err);
    if (s != DLB_OK)
        fprintf(stderr, "%s: read back: %s\n", what, err.msg);
    CHECK(s == DLB_OK);
    CHECK(a && b && dlb_model_infer(m, x, BATCH, a, &err) == DLB_OK);
    if (s == DLB_OK) {
        CHECK(dlb_model_infer(m2, x, BATCH, b, &err) == DLB_OK);
        double worst = 0;
        int moved = 0;
        for (size_t k = 0; k < nout; k++) {
            CHECK_NEAR(b[k], a[k], tol);
            double d = fabs((double)b[k] - a[k]);
            worst = d > worst ? d : worst;
            moved |= a[k] != a[0];
        }
        CHECK(moved); /* the inputs and weights gave distinct scores */
        fprintf(stderr, "%s: %zu log-probabilities, worst difference %.3g\n",
                what, nout, worst);
    }
    dlb_model_destroy(m2);
    if (back)
        *back = sp2;
    else
        dlb_model_spec_free(sp2);
    unlink(path);
    free(a);
    free(b);
}

static void zoo(struct dlb_backend *be, const char *name, uint64_t seed)
{
    struct dlb_error err = {""};
    struct dlb_model_spec *sp = load_ini(name);
    struct dlb_model *m = NULL;
    CHECK(sp && dlb_model_create(sp, be, DLB_F32, seed, &m, &err) == DLB_OK);
    if (!m) {
        dlb_model_spec_free(sp);
        return;
    }
    randomise(m, seed);
    float *x = random_input(sp, seed + 1);
    round_trip(m, be, x, TOL, name, NULL);
    free(x);
    dlb_model_destroy(m);
    dlb_model_spec_free(sp);
}

/* LeNet's first convolution keeps its even filters (rebuilt smaller); the
 * second's weights are masked to zero where their index is a multiple of
 * 3. The file holds the smaller network and the zeros. */
static void pruned(struct dlb_backend *be)
{
    struct dlb_error err = {""};
    struct dlb_model_spec *sp = load_ini("lenet"), *back = NULL;
    struct dlb_model *m = NULL;
    CHECK(sp && dlb_model_create(sp, be, DLB_F32, 5, &m, &err) == DLB_OK);
    if (!m) {
        dlb_model_spec_free(sp);
        return;
    }
    randomise(m, 5);
    unsigned c1 = 0, c2 = 0;
    while (sp->layers[c1].kind != DLB_LAYER_CONV)
        c1++;
    for (c2 = c1 + 1; sp->layers[c2].kind != DLB_LAYER_CONV; c2++)
        ;
    uint32_t keep[64], n = 0;
    for (uint32_t u = 0; u < sp->layers[c1].out_c; u += 2)
        keep[n++] = u;
    struct dlb_prune_keep k = {c1, keep, n};
    CHECK(dlb_model_prune_remove(m, &k, 1, &err) == DLB_OK);
    const struct dlb_model_spec *ps = dlb_model_spec_of(m);
    size_t wn = 0;
    char wname[128];
    snprintf(wname, sizeof wname, "%s.weight", ps->layers[c2].name);
    CHECK(dlb_model_tensor_count(m, wname, &wn, &err) == DLB_OK);
    uint8_t *mask = malloc(wn);
    for (size_t i = 0; mask && i < wn; i++)
        mask[i] = i % 3 != 0;
    CHECK(mask && dlb_model_prune_set_mask(m, c2, mask, wn, &err) == DLB_OK);
    float *x = random_input(ps, 6);
    round_trip(m, be, x, TOL, "lenet-pruned", &back);
    CHECK(back && back->layers[c1].filters == n);
    CHECK(back && back->layers[c2].in_c == n);
    CHECK(back && back->params == ps->params);
    /* the mask's zeros are the file's: every third weight of conv2 */
    struct dlb_model *m2 = NULL;
    float *w2 = malloc(wn * sizeof *w2);
    size_t zeros = 0;
    CHECK(back && w2 && dlb_model_create(back, be, DLB_F32, 1, &m2, &err) == DLB_OK);
    CHECK(m2 && dlb_model_tensor_io(m2, wname, w2, wn, 0, &err) == DLB_OK);
    for (size_t i = 0; m2 && w2 && i < wn; i++)
        zeros += w2[i] == 0.0f;
    CHECK(zeros == (wn + 2) / 3);
    dlb_model_destroy(m2);
    free(w2);
    free(mask);
    free(x);
    dlb_model_spec_free(back);
    dlb_model_destroy(m);
    dlb_model_spec_free(sp);
}

/* The largest |x| each conv or linear layer reads (quant.observe). */
static dlb_status observe_max(void *ctx, unsigned layer, const float *x,
                              uint32_t n, size_t per_image)
{
    float *mx = ctx;
    for (size_t k = 0; k < (size_t)n * per_image; k++)
        mx[layer] = fabsf(x[k]) > mx[layer] ? fabsf(x[k]) : mx[layer];
    return DLB_OK;
}

/* LeNet in int8 on ref: the image (signed) as u8 with zero point 128, the
 * inputs after ReLUs as u8 from 0, each scale from the largest value seen;
 * weights per channel (the maximum of each filter over 127). The file has
 * a QuantizeLinear/DequantizeLinear pair before every conv and linear
 * layer; read back, its fp32 simulation gives the int8 model's
 * log-probabilities within 1e-3 (the int8 model requantises from its
 * int32 accumulator, the simulation from fp32 sums: a value on a rounding
 * boundary may land one step apart). */
static void int8(struct dlb_backend *be)
{
    struct dlb_error err = {""};
    struct dlb_model_spec *sp = load_ini("lenet");
    struct dlb_model *m = NULL;
    CHECK(sp && dlb_model_create(sp, be, DLB_F32, 21, &m, &err) == DLB_OK);
    if (!m) {
        dlb_model_spec_free(sp);
        return;
    }
    randomise(m, 21);
    float *x = random_input(sp, 22), mx[64] = {0};
    struct dlb_quant_layer ql[64];
    float *ws[64] = {0};
    CHECK(sp->n_layers < 64);
    CHECK(dlb_model_quant_observe(m, x, BATCH, observe_max, mx, &err) == DLB_OK);
    memset(ql, 0, sizeof ql);
    for (size_t i = 0; i < sp->n_layers; i++) {
        const struct dlb_layer_spec *L = &sp->layers[i];
        ql[i].act_type = DLB_F32;
        if (L->kind != DLB_LAYER_CONV && L->kind != DLB_LAYER_LINEAR)
            continue;
        size_t wn = 0;
        char wname[128];
        snprintf(wname, sizeof wname, "%s.weight", L->name);
        CHECK(dlb_model_tensor_count(m, wname, &wn, &err) == DLB_OK);
        float *w = malloc(wn * sizeof *w);
        ws[i] = calloc(L->out_c, sizeof *ws[i]);
        CHECK(w && ws[i] && dlb_model_quant_weights(m, i, w, wn, ws[i] ? ws[i] : w,
                                                    L->out_c, &err) == DLB_OK);
        for (size_t o = 0; w && ws[i] && o < L->out_c; o++) {
            float a = 0;
            for (size_t k = 0; k < wn / L->out_c; k++)
                a = fabsf(w[o * (wn / L->out_c) + k]) > a ? fabsf(w[o * (wn / L->out_c) + k]) : a;
            ws[i][o] = a / 127.0f;
        }
        free(w);
        int first = i == 0;
        ql[i] = (struct dlb_quant_layer){DLB_U8, (first ? 2 * mx[i] : mx[i]) / 255.0f,
                                         first ? 128 : 0, ws[i], L->out_c};
    }
    struct dlb_quant_summary sum;
    dlb_status s = dlb_model_quant_apply(m, ql, sp->n_layers, &sum, &err);
    if (s != DLB_OK)
        fprintf(stderr, "int8: %s\n", err.msg);
    CHECK(s == DLB_OK && sum.int8_layers == 4);
    if (s == DLB_OK)
        round_trip(m, be, x, 1e-3, "lenet-int8", NULL);
    for (size_t i = 0; i < 64; i++)
        free(ws[i]);
    free(x);
    dlb_model_destroy(m);
    dlb_model_spec_free(sp);
}

/* A small QDQ graph, input 1x4x4 -> QuantizeLinear (scale 0.1, u8 zero
 * point 3) -> DequantizeLinear (scale dq_scale) -> `reader` (Conv, or Relu
 * then Conv) -> Flatten -> Gemm, read back: NULL and the message in err
 * when refused. */
static struct dlb_model_spec *qdq_graph(float dq_scale, int relu_reads,
                                        struct dlb_error *err)
{
    struct ow w = {0};
    char path[512];
    float s1 = 0.1f, wc[2 * 9], wg[3 * 8];
    uint8_t z = 3;
    for (size_t k = 0; k < 18; k++)
        wc[k] = 0.05f * (float)k - 0.4f;
    for (size_t k = 0; k < 24; k++)
        wg[k] = 0.03f * (float)k - 0.3f;
    int64_t dc[4] = {2, 1, 3, 3}, dg[2] = {3, 8}, chw[3] = {1, 4, 4};
    ow_init_floats(&w, "s1", &s1, NULL, 0);
    ow_init_floats(&w, "s2", &dq_scale, NULL, 0);
    ow_init_bytes(&w, "z", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, &z, NULL, 0);
    ow_init_floats(&w, "wc", wc, dc, 4);
    ow_init_floats(&w, "wg", wg, dg, 2);
    const char *q[3] = {"input", "s1", "z"}, *dq[3] = {"xq", "s2", "z"};
    const char *r[1] = {"xdq"}, *c[2] = {relu_reads ? "xr" : "xdq", "wc"};
    const char *f[1] = {"y"}, *g[2] = {"yf", "wg"};
    ow_node(&w, "QuantizeLinear", "q", q, 3, "xq");
    ow_node(&w, "DequantizeLinear", "dq", dq, 3, "xdq");
    if (relu_reads)
        ow_node(&w, "Relu", "r", r, 1, "xr");
    ow_node(&w, "Conv", "conv", c, 2, "y");
    ow_node(&w, "Flatten", "flat", f, 1, "yf");
    Onnx__NodeProto *gn = ow_node(&w, "Gemm", "fc", g, 2, "logits");
    ow_attr_int(&w, gn, "transB", 1);
    snprintf(path, sizeof path, "%s/qdq.onnx", tmpdir);
    struct dlb_model_spec *sp = NULL;
    if (ow_write_file(&w, path, "qdq", "input", chw, "logits", 3, err) == DLB_OK)
        dlb_model_file_load(path, &sp, err);
    ow_free(&w);
    unlink(path);
    return sp;
}

/* The importer's QDQ: a pair before a Conv sets its input quantisation;
 * a pair whose scales differ, or read by another operator, is refused
 * naming the node. */
static void qdq_import(void)
{
    struct dlb_error err = {""};
    struct dlb_model_spec *sp = qdq_graph(0.1f, 0, &err);
    CHECK(sp != NULL);
    if (sp) {
        CHECK(sp->layers[0].kind == DLB_LAYER_CONV);
        CHECK(sp->layers[0].in_q_scale == 0.1f);
        CHECK(sp->layers[0].in_q_zero == 3 && sp->layers[0].in_q_type == DLB_U8);
    }
    dlb_model_spec_free(sp);
    CHECK(!(sp = qdq_graph(0.2f, 0, &err)));
    CHECK(strstr(err.msg, "node 'dq' (DequantizeLinear)") &&
          strstr(err.msg, "differ from its QuantizeLinear's"));
    dlb_model_spec_free(sp);
    CHECK(!(sp = qdq_graph(0.1f, 1, &err)));
    CHECK(strstr(err.msg, "node 'r' (Relu)") &&
          strstr(err.msg, "only as the data input of Conv or Gemm"));
    dlb_model_spec_free(sp);
}

/* A path whose folder does not exist: an error naming it, nothing left. */
static void bad_path(struct dlb_backend *be)
{
    struct dlb_error err = {""};
    struct dlb_model_spec *sp = load_ini("lenet");
    struct dlb_model *m = NULL;
    char path[512];
    snprintf(path, sizeof path, "%s/no-such-dir/x.onnx", tmpdir);
    CHECK(sp && dlb_model_create(sp, be, DLB_F32, 1, &m, &err) == DLB_OK);
    CHECK(m && dlb_onnx_write_model(m, path, &err) == DLB_ERR_IO);
    CHECK(strstr(err.msg, path) != NULL);
    CHECK(access(path, F_OK) != 0);
    dlb_model_destroy(m);
    dlb_model_spec_free(sp);
}

int main(void)
{
    struct dlb_backend *be = NULL;
    char why[256];
    srcdir = getenv("srcdir") && *getenv("srcdir") ? getenv("srcdir") : ".";
    snprintf(tmpdir, sizeof tmpdir, "%s/dlb-onnx-export.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir) ||
        dlb_backend_open("ref", NULL, &be, why, sizeof why) != DLB_OK) {
        fprintf(stderr, "setup failed\n");
        return 1;
    }
    zoo(be, "lenet", 11);
    zoo(be, "resnet20", 12);
    zoo(be, "mobilenet-v2-32", 13);
    pruned(be);
    int8(be);
    qdq_import();
    bad_path(be);
    dlb_backend_close(be);
    rmdir(tmpdir);
    return check_exit();
}
