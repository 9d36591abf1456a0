/* Micro-benchmark of the cpu backend: every operation of a LeNet and a
 * vgg-small training step at batch 256 (fp32 and, where the CPU has
 * AVX512_BF16, bf16), timed one by one inside whole steps, plus the whole
 * step (img/s), LeNet inference at batch 1024 and the batch-1 latency.
 * Figures are medians over the steps; compare them with
 * doc CPU-PERF-NOTES (oneDNN 2.6 alone on this machine kind).
 *
 *   bench_cpu_ops [steps] [threads]     defaults: 20 steps, all cores
 *
 * BENCH_ONLY=lenet,infer,vgg picks parts. BENCH_FUSE=0 runs every layer
 * apart on the training kernels instead of fusing them and running
 * inference on the inference kernels as the model does (model_fuse.c). BENCH_CLOCK=cpu times with the
 * process's CPU clock instead of the wall clock: with one thread on a
 * shared machine that leaves out the time other processes take the core
 * (not their cache pollution), so figures taken while the machine is busy
 * stay comparable.
 *
 * bf16 steps keep fp32 master weights: the weights are cast to bf16 each
 * step and the bf16 gradients cast back before the fp32 SGD update, as a
 * mixed-precision policy does; batch norm's parameters stay fp32. The
 * "mixed" vgg step keeps the activations, batch norm, the linear head and
 * the loss in fp32 and runs the convolutions in bf16 (bf16 weights, fp32
 * activations in and out: the cpu backend converts on the way in). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "backend/op_call.h"
#include "backend/dtype.h"
#include "util/rng.h"

#define MAX_OPS 96
#define MAX_STEPS 200

static struct dlb_backend *be;
static struct dlb_rng rng;
static int steps = 20;

/* Per-op samples: op k of a step is slot k. */
static const char *op_name[MAX_OPS];
static double op_ms[MAX_OPS][MAX_STEPS];
static int n_ops, step_i;

static clockid_t clock_id = CLOCK_MONOTONIC;

static double now(void)
{
    struct timespec ts;
    clock_gettime(clock_id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int slot;

#define T(name, call)                                                       \
    do {                                                                    \
        double t0_ = now();                                                 \
        dlb_status s_ = (call);                                             \
        double t1_ = now();                                                 \
        if (s_ != DLB_OK) {                                                 \
            fprintf(stderr, "%s failed: %s\n", name,                       \
                    dlb_backend_last_error(be));                            \
            exit(1);                                                        \
        }                                                                   \
        op_name[slot] = name;                                               \
        op_ms[slot][step_i] = (t1_ - t0_) * 1e3;                            \
        slot++;                                                             \
    } while (0)

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    double *c = malloc((size_t)n * sizeof *c);
    memcpy(c, v, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_d);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

static struct dlb_buffer *buf(enum dlb_dtype t, size_t n)
{
    struct dlb_buffer *b = NULL;
    if (DLB_BE_CALL(be, buffer_alloc, t, n, &b) != DLB_OK) {
        fprintf(stderr, "alloc: %s\n", dlb_backend_last_error(be));
        exit(1);
    }
    float *v = malloc(n * sizeof *v + 4);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(0.1 * (dlb_rng_double(&rng) - 0.5));
    struct dlb_buffer *f = NULL;
    DLB_BE_CALL(be, buffer_alloc, DLB_F32, n, &f);
    DLB_BE_CALL(be, copy_from_host, f, 0, v, n * 4);
    if (t == DLB_S32)
        DLB_RUN(be, fill, n, b, 3.0);
    else
        DLB_RUN(be, cast, n, f, b);
    dlb_backend_ops_of(be)->buffer_free(be, f);
    free(v);
    return b;
}

/* A parameter: fp32 master, its compute copy (the master itself in fp32),
 * gradient (compute type) and fp32 gradient/velocity. */
struct param {
    size_t n;
    struct dlb_buffer *master, *w, *g, *g32, *v;
};

static struct param param(enum dlb_dtype t, size_t n)
{
    struct param p = { n, buf(DLB_F32, n), NULL, NULL, NULL, buf(DLB_F32, n) };
    p.w = t == DLB_F32 ? p.master : buf(t, n);
    p.g = buf(t, n);
    p.g32 = t == DLB_F32 ? p.g : buf(DLB_F32, n);
    return p;
}

static void to_compute(struct param *p, const char *name)
{
    if (p->w != p->master)
        T(name, DLB_RUN(be, cast, p->n, p->master, p->w));
}

static void update(struct param *p, const char *name)
{
    struct dlb_sgd_desc d = { p->n, 0.01f, 0.9f, 5e-4f };
    if (p->g32 != p->g)
        T("grad cast", DLB_RUN(be, cast, p->n, p->g, p->g32));
    T(name, DLB_RUN(be, sgd_update, &d, p->master, p->g32, p->v));
}

static struct dlb_conv2d_desc conv(uint32_t n, uint32_t ic, uint32_t hw,
                                   uint32_t oc, uint32_t k, uint32_t pad)
{
    uint32_t o = dlb_conv_out_size(hw, k, 1, pad);
    struct dlb_conv2d_desc d = { n, ic, hw, hw, oc, k, k, 1, 1, pad, pad, o, o,
                                 1 };
    return d;
}

static struct dlb_pool_desc pool(enum dlb_pool_kind kind, uint32_t n,
                                 uint32_t c, uint32_t hw, uint32_t k)
{
    uint32_t o = dlb_conv_out_size(hw, k, k, 0);
    struct dlb_pool_desc d = { kind, n, c, hw, hw, k, k, k, k, 0, 0, o, o };
    return d;
}

static void report(const char *title, double imgs)
{
    double total[MAX_STEPS];
    printf("\n%s\n%-28s %10s\n", title, "op", "ms (median)");
    for (int k = 0; k < n_ops; k++)
        printf("%-28s %10.3f\n", op_name[k], median(op_ms[k], steps));
    for (int s = 0; s < steps; s++) {
        total[s] = 0.0;
        for (int k = 0; k < n_ops; k++)
            total[s] += op_ms[k][s];
    }
    double m = median(total, steps);
    printf("%-28s %10.3f   %.0f img/s\n", "STEP TOTAL", m, imgs / (m * 1e-3));
}

/* ---- LeNet ------------------------------------------------------------ */

static void lenet(enum dlb_dtype t, uint32_t n, int train, const char *title)
{
    struct dlb_conv2d_desc c1 = conv(n, 1, 28, 10, 5, 0);
    struct dlb_conv2d_desc c2 = conv(n, 10, 12, 20, 5, 0);
    struct dlb_pool_desc p1 = pool(DLB_POOL_MAX, n, 10, 24, 2);
    struct dlb_pool_desc p2 = pool(DLB_POOL_MAX, n, 20, 8, 2);
    struct dlb_linear_desc f1 = { n, 320, 50 }, f2 = { n, 50, 10 };
    struct dlb_loss_desc ld = { n, 10 };
    struct dlb_dropout_desc d2 = { DLB_DROPOUT_CHANNEL, n, 20, 64, 0.5f, 1 };
    struct dlb_dropout_desc d3 = { DLB_DROPOUT_ELEMENT, n, 50, 1, 0.5f, 2 };
    struct param w1 = param(t, 250), b1 = param(t, 10), w2 = param(t, 5000),
                 b2 = param(t, 20), w3 = param(t, 16000), b3 = param(t, 50),
                 w4 = param(t, 500), b4 = param(t, 10);
    size_t a1 = (size_t)n * 10 * 576, a2 = (size_t)n * 1440,
           a3 = (size_t)n * 1280, a4 = (size_t)n * 320;
    struct dlb_buffer *x = buf(t, (size_t)n * 784), *y1 = buf(t, a1),
        *y2 = buf(t, a2), *ws1 = buf(DLB_S32, a2), *y3 = buf(t, a3),
        *y4 = buf(t, a4), *ws2 = buf(DLB_S32, a4), *y5 = buf(t, (size_t)n * 50),
        *y6 = buf(t, (size_t)n * 10), *ls = buf(t, (size_t)n * 10),
        *lab = buf(DLB_S32, n), *loss = buf(DLB_F32, 1),
        *g6 = buf(t, (size_t)n * 10), *g5 = buf(t, (size_t)n * 50),
        *g4 = buf(t, a4), *g3 = buf(t, a3), *g2 = buf(t, a2), *g1 = buf(t, a1);
    /* conv1, pool1 (and in inference relu1) in one pass where the model
     * fuses them (model_fuse.c) */
    const struct dlb_backend_conv_pool *fuse = dlb_backend_conv_pool(be);
    /* and inference's convolutions on the inference kernels */
    dlb_status (*infer_conv)(struct dlb_backend *, const struct dlb_conv2d_desc *,
                             const struct dlb_buffer *, const struct dlb_buffer *,
                             const struct dlb_buffer *, struct dlb_buffer *) =
        fuse && !train ? fuse->conv_fwd_infer : NULL;
    if (fuse && !fuse->applies(&c1, &p1, t))
        fuse = NULL;
    /* BENCH_FUSE=0: every layer apart, as a model without the fusion */
    if (getenv("BENCH_FUSE") && !strcmp(getenv("BENCH_FUSE"), "0"))
        fuse = NULL, infer_conv = NULL;
    n_ops = 0;
    for (step_i = -3; step_i < steps; step_i++) {
        int keep = step_i;
        if (step_i < 0)
            step_i = 0; /* warm-up steps write slot 0, overwritten later */
        slot = 0;
        struct param *ps[] = { &w1, &b1, &w2, &b2, &w3, &b3, &w4, &b4 };
        for (int i = 0; i < 8; i++)
            to_compute(ps[i], "weight cast");
        if (fuse && train) {
            T("conv1+pool1 fwd", fuse->fwd(be, &c1, &p1, 0, x, w1.w, b1.w, y2,
                                           ws1));
            T("relu1 fwd", DLB_RUN(be, relu_fwd, a2, y2, y2));
        } else if (fuse) {
            T("conv1+pool1+relu1 fwd", fuse->fwd(be, &c1, &p1, 1, x, w1.w,
                                                 b1.w, y2, NULL));
        } else {
            T("conv1 fwd", DLB_RUN(be, conv2d_fwd, &c1, x, w1.w, b1.w, y1));
            T("pool1 fwd", DLB_RUN(be, pool_fwd, &p1, y1, y2,
                                   train ? ws1 : NULL));
            T("relu1 fwd", DLB_RUN(be, relu_fwd, a2, y2, y2));
        }
        if (infer_conv)
            T("conv2 fwd", infer_conv(be, &c2, y2, w2.w, b2.w, y3));
        else
            T("conv2 fwd", DLB_RUN(be, conv2d_fwd, &c2, y2, w2.w, b2.w, y3));
        if (train)
            T("dropout2d fwd", DLB_RUN(be, dropout_fwd, &d2, y3, y3));
        T("pool2 fwd", DLB_RUN(be, pool_fwd, &p2, y3, y4, train ? ws2 : NULL));
        T("relu2 fwd", DLB_RUN(be, relu_fwd, a4, y4, y4));
        T("fc1 fwd", DLB_RUN(be, linear_fwd, &f1, y4, w3.w, b3.w, y5));
        T("relu3 fwd", DLB_RUN(be, relu_fwd, (size_t)n * 50, y5, y5));
        if (train)
            T("dropout fwd", DLB_RUN(be, dropout_fwd, &d3, y5, y5));
        T("fc2 fwd", DLB_RUN(be, linear_fwd, &f2, y5, w4.w, b4.w, y6));
        T("logsoftmax fwd", DLB_RUN(be, logsoftmax_fwd, &ld, y6, ls));
        if (train) {
            T("nll loss", DLB_RUN(be, nll_loss, &ld, ls, lab, loss));
            T("logsoftmax+nll bwd",
              DLB_RUN(be, logsoftmax_nll_bwd, &ld, ls, lab, 1.0f, g6));
            T("fc2 bwd", DLB_RUN(be, linear_bwd, &f2, y5, w4.w, g6, g5, w4.g,
                                 b4.g));
            T("dropout bwd", DLB_RUN(be, dropout_bwd, &d3, g5, g5));
            T("relu3 bwd", DLB_RUN(be, relu_bwd, (size_t)n * 50, y5, g5, g5));
            T("fc1 bwd", DLB_RUN(be, linear_bwd, &f1, y4, w3.w, g5, g4, w3.g,
                                 b3.g));
            T("relu2 bwd", DLB_RUN(be, relu_bwd, a4, y4, g4, g4));
            T("pool2 bwd", DLB_RUN(be, pool_bwd, &p2, g4, ws2, g3));
            T("dropout2d bwd", DLB_RUN(be, dropout_bwd, &d2, g3, g3));
            T("conv2 bwd_data", DLB_RUN(be, conv2d_bwd_data, &c2, w2.w, g3,
                                        g2));
            T("conv2 bwd_weights", DLB_RUN(be, conv2d_bwd_weights, &c2, y2, g3,
                                           w2.g, b2.g));
            T("relu1 bwd", DLB_RUN(be, relu_bwd, a2, y2, g2, g2));
            if (fuse) {
                T("pool1+conv1 bwd_weights",
                  fuse->bwd_weights(be, &c1, &p1, x, g2, ws1, w1.g, b1.g));
            } else {
                T("pool1 bwd", DLB_RUN(be, pool_bwd, &p1, g2, ws1, g1));
                T("conv1 bwd_weights", DLB_RUN(be, conv2d_bwd_weights, &c1, x,
                                               g1, w1.g, b1.g));
            }
            for (int i = 0; i < 8; i++)
                update(ps[i], "sgd");
        }
        n_ops = slot;
        if (keep < 0)
            step_i = keep;
    }
    report(title, n);
    struct dlb_buffer *all[] = { x, y1, y2, ws1, y3, y4, ws2, y5, y6, ls, lab,
                                 loss, g6, g5, g4, g3, g2, g1 };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        dlb_backend_ops_of(be)->buffer_free(be, all[i]);
    /* the parameters are left to the process exit: a benchmark */
}

/* ---- vgg-small --------------------------------------------------------- */

struct stage {
    uint32_t ic, oc, hw;
    int pool_after;
};

/* Activations in t; convolution weights (and so the convolutions' compute
 * type) in ct: (f32, bf16) is the mixed-precision step, batch norm, the
 * loss and the linear head in f32, the convolutions in bf16. */
static void vgg(enum dlb_dtype t, enum dlb_dtype ct, uint32_t n,
                const char *title)
{
    static const struct stage st[5] = {
        { 1, 32, 28, 1 }, { 32, 64, 14, 0 }, { 64, 64, 14, 1 },
        { 64, 128, 7, 0 }, { 128, 128, 7, 0 },
    };
    static const char *names[5][9] = {
        { "conv1 fwd", "bn1 fwd", "relu1 fwd", "pool1 fwd", "pool1 bwd",
          "relu1 bwd", "bn1 bwd", "conv1 bwd_data", "conv1 bwd_weights" },
        { "conv2 fwd", "bn2 fwd", "relu2 fwd", "-", "-", "relu2 bwd", "bn2 bwd",
          "conv2 bwd_data", "conv2 bwd_weights" },
        { "conv3 fwd", "bn3 fwd", "relu3 fwd", "pool2 fwd", "pool2 bwd",
          "relu3 bwd", "bn3 bwd", "conv3 bwd_data", "conv3 bwd_weights" },
        { "conv4 fwd", "bn4 fwd", "relu4 fwd", "-", "-", "relu4 bwd", "bn4 bwd",
          "conv4 bwd_data", "conv4 bwd_weights" },
        { "conv5 fwd", "bn5 fwd", "relu5 fwd", "-", "-", "relu5 bwd", "bn5 bwd",
          "conv5 bwd_data", "conv5 bwd_weights" },
    };
    struct dlb_buffer *in[6], *cv[5], *bo[5], *po[5], *ws[5], *gin[6], *gc[5],
        *gb[5], *mean[5], *inv[5], *rm[5], *rv[5];
    struct param w[5], gam[5], bet[5], fw = param(t, 1280), fb = param(t, 10);
    struct dlb_conv2d_desc cd[5];
    struct dlb_batchnorm_desc bd[5];
    struct dlb_pool_desc pd[5];
    in[0] = buf(t, (size_t)n * 784);
    for (int i = 0; i < 5; i++) {
        size_t a = (size_t)n * st[i].oc * st[i].hw * st[i].hw;
        cd[i] = conv(n, st[i].ic, st[i].hw, st[i].oc, 3, 1);
        bd[i] = (struct dlb_batchnorm_desc){ n, st[i].oc, st[i].hw * st[i].hw,
                                             1e-5f, 0.1f };
        pd[i] = pool(DLB_POOL_MAX, n, st[i].oc, st[i].hw, 2);
        w[i] = param(ct, (size_t)st[i].oc * st[i].ic * 9);
        gam[i] = param(DLB_F32, st[i].oc);
        bet[i] = param(DLB_F32, st[i].oc);
        cv[i] = buf(t, a);
        bo[i] = buf(t, a);
        gc[i] = buf(t, a);
        gb[i] = buf(t, a);
        mean[i] = buf(DLB_F32, st[i].oc);
        inv[i] = buf(DLB_F32, st[i].oc);
        rm[i] = buf(DLB_F32, st[i].oc);
        rv[i] = buf(DLB_F32, st[i].oc);
        DLB_RUN(be, fill, st[i].oc, rv[i], 1.0);
        po[i] = ws[i] = NULL;
        if (st[i].pool_after) {
            po[i] = buf(t, a / 4);
            ws[i] = buf(DLB_S32, a / 4);
        }
        in[i + 1] = po[i] ? po[i] : bo[i];
        gin[i] = buf(t, (size_t)n * st[i].ic * st[i].hw * st[i].hw);
    }
    struct dlb_pool_desc gap = pool(DLB_POOL_AVG, n, 128, 7, 7);
    struct dlb_linear_desc fd = { n, 128, 10 };
    struct dlb_loss_desc ld = { n, 10 };
    struct dlb_buffer *g = buf(t, (size_t)n * 128), *gg = buf(t, (size_t)n * 128),
        *logit = buf(t, (size_t)n * 10), *ls = buf(t, (size_t)n * 10),
        *dl = buf(t, (size_t)n * 10), *lab = buf(DLB_S32, n),
        *loss = buf(DLB_F32, 1);
    for (step_i = -3; step_i < steps; step_i++) {
        int keep = step_i;
        if (step_i < 0)
            step_i = 0;
        slot = 0;
        for (int i = 0; i < 5; i++)
            to_compute(&w[i], "weight cast");
        to_compute(&fw, "weight cast");
        to_compute(&fb, "weight cast");
        for (int i = 0; i < 5; i++) {
            T(names[i][0], DLB_RUN(be, conv2d_fwd, &(cd[i]), in[i], w[i].w,
                                   NULL, cv[i]));
            T(names[i][1], DLB_RUN(be, batchnorm_fwd_train, &(bd[i]), cv[i],
                                   gam[i].master, bet[i].master, rm[i], rv[i],
                                   mean[i], inv[i], bo[i]));
            T(names[i][2], DLB_RUN(be, relu_fwd, (size_t)n * bd[i].c * bd[i].hw,
                                   bo[i], bo[i]));
            if (po[i])
                T(names[i][3], DLB_RUN(be, pool_fwd, &(pd[i]), bo[i], po[i],
                                       ws[i]));
        }
        T("gap fwd", DLB_RUN(be, pool_fwd, &gap, bo[4], g, NULL));
        T("fc fwd", DLB_RUN(be, linear_fwd, &fd, g, fw.w, fb.w, logit));
        T("logsoftmax fwd", DLB_RUN(be, logsoftmax_fwd, &ld, logit, ls));
        T("nll loss", DLB_RUN(be, nll_loss, &ld, ls, lab, loss));
        T("logsoftmax+nll bwd",
          DLB_RUN(be, logsoftmax_nll_bwd, &ld, ls, lab, 1.0f, dl));
        T("fc bwd", DLB_RUN(be, linear_bwd, &fd, g, fw.w, dl, gg, fw.g, fb.g));
        T("gap bwd", DLB_RUN(be, pool_bwd, &gap, gg, NULL, gb[4]));
        for (int i = 4; i >= 0; i--) {
            size_t a = (size_t)n * bd[i].c * bd[i].hw;
            struct dlb_buffer *gy = gb[i];
            if (po[i]) /* gb[i] holds the pooled gradient's input side */
                T(names[i][4], DLB_RUN(be, pool_bwd, &(pd[i]), gin[i + 1],
                                       ws[i], gb[i]));
            T(names[i][5], DLB_RUN(be, relu_bwd, a, bo[i], gy, gy));
            T(names[i][6], DLB_RUN(be, batchnorm_bwd, &(bd[i]), cv[i], gy,
                                   gam[i].master, mean[i], inv[i], gc[i],
                                   gam[i].g, bet[i].g));
            if (i > 0)
                T(names[i][7], DLB_RUN(be, conv2d_bwd_data, &(cd[i]), w[i].w,
                                       gc[i], po[i - 1] ? gin[i] : gb[i - 1]));
            T(names[i][8], DLB_RUN(be, conv2d_bwd_weights, &(cd[i]), in[i],
                                   gc[i], w[i].g, NULL));
        }
        for (int i = 0; i < 5; i++) {
            update(&w[i], "sgd");
            update(&gam[i], "sgd");
            update(&bet[i], "sgd");
        }
        update(&fw, "sgd");
        update(&fb, "sgd");
        n_ops = slot;
        if (keep < 0)
            step_i = keep;
    }
    report(title, n);
}

int main(int argc, char **argv)
{
    struct dlb_backend_config cfg = { .threads = 0, .seed = 1 };
    char reason[512];
    if (argc > 1)
        steps = atoi(argv[1]);
    if (argc > 2)
        cfg.threads = atoi(argv[2]);
    if (steps < 1 || steps > MAX_STEPS)
        steps = 20;
    if (getenv("BENCH_CLOCK") && strcmp(getenv("BENCH_CLOCK"), "cpu") == 0)
        clock_id = CLOCK_PROCESS_CPUTIME_ID;
    dlb_status s = dlb_backend_open("cpu", &cfg, &be, reason, sizeof reason);
    if (s == DLB_ERR_UNSUPPORTED) {
        fprintf(stderr, "skip: %s\n", reason);
        return 77;
    }
    if (s != DLB_OK) {
        fprintf(stderr, "cpu backend: %s\n", reason);
        return 1;
    }
    dlb_rng_seed(&rng, 7);
    struct dlb_device_info info;
    DLB_BE_CALL(be, device_info, &info);
    printf("%s, %s, %d threads, %d steps (medians, %s clock)\n", info.name,
           info.driver, info.compute_units, steps,
           clock_id == CLOCK_MONOTONIC ? "wall" : "process CPU");
    int bf16 = DLB_BE_CALL(be, supports, DLB_CAP_BF16, reason, sizeof reason)
               == DLB_OK;
    const char *only = getenv("BENCH_ONLY"); /* lenet, vgg, infer */
    if (!only || strstr(only, "lenet")) {
        lenet(DLB_F32, 256, 1, "LeNet training, fp32, batch 256");
        lenet(DLB_F32, 64, 1, "LeNet training, fp32, batch 64");
    }
    if (!only || strstr(only, "infer")) {
        lenet(DLB_F32, 1024, 0, "LeNet inference, fp32, batch 1024");
        lenet(DLB_F32, 1, 0, "LeNet inference, fp32, batch 1 (latency)");
    }
    if (!only || strstr(only, "vgg")) {
        vgg(DLB_F32, DLB_F32, 256, "vgg-small training, fp32, batch 256");
        if (bf16) {
            vgg(DLB_BF16, DLB_BF16, 256, "vgg-small training, bf16, batch 256");
            vgg(DLB_F32, DLB_BF16, 256, "vgg-small training, bf16 convolutions "
                "with f32 batch norm (mixed), batch 256");
        }
        else
            printf("\nbf16 skipped: %s\n", reason);
    }
    if (bf16 && (!only || strstr(only, "lenet")))
        lenet(DLB_BF16, 256, 1, "LeNet training, bf16, batch 256");
    return 0;
}
