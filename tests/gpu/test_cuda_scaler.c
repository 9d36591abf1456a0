/* The gradient scaler on the device (backend API 1.2) against ref:
 *   - unscale_check: the unscaled values bit for bit as ref's scale (the
 *     same float product; a NaN as any NaN), the flag as ref's
 *     check_finite, ORed over calls;
 *   - sgd_update_if_finite: as ref's sgd_update (1e-6 per element) when the
 *     flag is clear, w and v untouched bit for bit when it is set;
 *   - flag_post/flag_wait: the value while later work is still queued; a
 *     wait without a post is refused;
 *   - LeNet, 30 steps of dynamic loss scaling:
 *     f32 from 65536 (nothing overflows): the device path, the host check
 *       on cuda (host_scaler) and the cpu backend (ref without oneDNN)
 *       agree on the scaler, the loss within 1e-4 on cuda (cuDNN may sum
 *       with atomics) and 1e-3 of cpu;
 *     fp16 from 2^20 (fp16 gradients overflow: steps skipped, the scale
 *       backed off and grown again): the two cuda paths agree on every
 *       figure and the loss within 1e-4; against ref in fp16 the same
 *       skipped steps and scale, the loss within 2e-2 (fp16 rounding; a
 *       step whose largest gradient lands within rounding of 65504 could
 *       tip either way, which these sizes make unlikely, not impossible).
 * Exits 77 without a GPU. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amp_scaler.h"
#include "backend/backend.h"
#include "backend/op_call.h"
#include "data/dataset.h"
#include "gpu_open.h"
#include "train/model_scaler.h"
#include "train/train_run.h"
#include "util/rng.h"

#define N 100003
#define STEPS 30

static struct dlb_backend *dev, *host;

static struct dlb_buffer *upload(struct dlb_backend *be, enum dlb_dtype t,
                                 const void *src, size_t n, size_t esz)
{
    struct dlb_buffer *b = NULL;
    CHECK(dlb_backend_ops_of(be)->buffer_alloc(be, t, n, &b) == DLB_OK);
    if (b && src)
        CHECK(dlb_backend_ops_of(be)->copy_from_host(be, b, 0, src, n * esz) ==
              DLB_OK);
    return b;
}

static void download(struct dlb_backend *be, void *dst,
                     const struct dlb_buffer *b, size_t bytes)
{
    CHECK(dlb_backend_ops_of(be)->copy_to_host(be, dst, b, 0, bytes) == DLB_OK);
}

static void release(struct dlb_backend *be, struct dlb_buffer *b)
{
    dlb_backend_ops_of(be)->buffer_free(be, b);
}

static int32_t posted_flag(const struct dlb_buffer *found)
{
    int32_t v = -1;
    CHECK(DLB_BE_CALL(dev, flag_post, found) == DLB_OK);
    CHECK(DLB_BE_CALL(dev, flag_wait, &v) == DLB_OK);
    return v;
}

/* One gradient, unscaled on both sides; `bad` elements made inf/NaN. */
static void check_unscale(const float *g, int bad)
{
    const float inv = 1.0f / 1024.0f;
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    int32_t zero = 0;
    int found_ref = -1;
    memcpy(a, g, N * sizeof *a);
    if (bad) {
        a[17] = INFINITY;
        a[N - 1] = NAN;
    }
    struct dlb_buffer *gd = upload(dev, DLB_F32, a, N, 4);
    struct dlb_buffer *gr = upload(host, DLB_F32, a, N, 4);
    struct dlb_buffer *fd = upload(dev, DLB_S32, &zero, 1, 4);
    CHECK(DLB_RUN(dev, unscale_check, N, gd, inv, fd) == DLB_OK);
    CHECK(DLB_RUN(host, scale, N, gr, inv) == DLB_OK);
    CHECK(DLB_RUN(host, check_finite, N, gr, &found_ref) == DLB_OK);
    download(dev, a, gd, N * sizeof *a);
    download(host, b, gr, N * sizeof *b);
    /* Bit for bit, except that a NaN is any NaN: the GPU's multiply
     * returns its canonical NaN, the CPU's keeps the operand's payload. */
    size_t differ = 0;
    for (size_t i = 0; i < N; i++)
        differ += isnan(a[i]) ? !isnan(b[i]) : memcmp(&a[i], &b[i], 4) != 0;
    CHECK(differ == 0);
    CHECK(posted_flag(fd) == found_ref && found_ref == bad);
    /* A finite buffer afterwards leaves a set flag set. */
    struct dlb_buffer *ok = upload(dev, DLB_F32, g, N, 4);
    CHECK(DLB_RUN(dev, unscale_check, N, ok, 1.0f, fd) == DLB_OK);
    CHECK(posted_flag(fd) == bad);
    release(dev, ok);
    release(dev, gd);
    release(dev, fd);
    release(host, gr);
    free(a);
    free(b);
}

static void check_sgd_if(const float *w, const float *g, const float *v)
{
    const struct dlb_sgd_desc d = {N, 0.01f, 0.9f, 5e-4f};
    float *wa = malloc(N * sizeof *wa), *wb = malloc(N * sizeof *wb);
    float *va = malloc(N * sizeof *va), *vb = malloc(N * sizeof *vb);
    for (int32_t flag = 0; flag < 2; flag++) {
        struct dlb_buffer *wd = upload(dev, DLB_F32, w, N, 4);
        struct dlb_buffer *gd = upload(dev, DLB_F32, g, N, 4);
        struct dlb_buffer *vd = upload(dev, DLB_F32, v, N, 4);
        struct dlb_buffer *fd = upload(dev, DLB_S32, &flag, 1, 4);
        struct dlb_buffer *wr = upload(host, DLB_F32, w, N, 4);
        struct dlb_buffer *gr = upload(host, DLB_F32, g, N, 4);
        struct dlb_buffer *vr = upload(host, DLB_F32, v, N, 4);
        CHECK(DLB_RUN(dev, sgd_update_if_finite, &d, wd, gd, vd, fd) ==
              DLB_OK);
        if (!flag)
            CHECK(DLB_RUN(host, sgd_update, &d, wr, gr, vr) == DLB_OK);
        download(dev, wa, wd, N * 4);
        download(dev, va, vd, N * 4);
        download(host, wb, wr, N * 4);
        download(host, vb, vr, N * 4);
        double worst = 0.0;
        for (size_t i = 0; i < N; i++) {
            worst = fmax(worst, fabs(wa[i] - wb[i]) / fmax(1.0, fabs(wb[i])));
            worst = fmax(worst, fabs(va[i] - vb[i]) / fmax(1.0, fabs(vb[i])));
        }
        if (flag)
            CHECK(memcmp(wa, w, N * 4) == 0 && memcmp(va, v, N * 4) == 0);
        else
            CHECK(worst <= 1e-6);
        fprintf(stderr, "sgd_update_if_finite, flag %d: worst error %.2e\n",
                (int)flag, worst);
        release(dev, wd);
        release(dev, gd);
        release(dev, vd);
        release(dev, fd);
        release(host, wr);
        release(host, gr);
        release(host, vr);
    }
    free(wa);
    free(wb);
    free(va);
    free(vb);
}

/* The posted value comes back while a long tail of work is queued. */
static void check_post_wait(void)
{
    int32_t one = 1, v = -1;
    struct dlb_buffer *fd = upload(dev, DLB_S32, &one, 1, 4);
    struct dlb_buffer *big = upload(dev, DLB_F32, NULL, (size_t)64 << 20, 4);
    CHECK(DLB_BE_CALL(dev, flag_wait, &v) == DLB_ERR_INTERNAL);
    CHECK(DLB_BE_CALL(dev, flag_post, fd) == DLB_OK);
    for (int i = 0; i < 20; i++)
        CHECK(DLB_RUN(dev, fill, (size_t)64 << 20, big, 1.0)
                  == DLB_OK);
    CHECK(DLB_BE_CALL(dev, flag_wait, &v) == DLB_OK);
    CHECK(v == 1);
    CHECK(DLB_BE_CALL0(dev, synchronize) == DLB_OK);
    release(dev, big);
    release(dev, fd);
}

/* ---- LeNet with the amp plugin's scaler -------------------------------- */

struct policy {
    struct dlb_amp_scaler sc;
    enum dlb_dtype low;
};

static enum dlb_dtype p_type(void *st, enum dlb_layer_kind k)
{
    return k == DLB_LAYER_LOGSOFTMAX ? DLB_F32 : ((struct policy *)st)->low;
}

static float p_scale(void *st)
{
    return dlb_amp_scaler_scale(&((struct policy *)st)->sc);
}

static int p_after(void *st, int nonfinite)
{
    return dlb_amp_scaler_update(&((struct policy *)st)->sc, nonfinite);
}

static void p_reset(void *st)
{
    dlb_amp_scaler_reset(&((struct policy *)st)->sc);
}

static const struct dlb_precision_hooks hooks = {
    p_type, p_scale, p_after, p_reset, NULL,
};

struct run {
    double loss;
    struct policy pol;
    int on_device;
};

static int train(struct dlb_backend *be, const struct dlb_model_spec *spec,
                 const struct dlb_dataset *tr, enum dlb_dtype low,
                 float init_scale, int host_scaler, struct run *out)
{
    struct dlb_model *m = NULL;
    struct dlb_error err = {""};
    struct dlb_batch_spec bs = {64, 1, 0, 1, 42};
    double secs = 0;
    memset(out, 0, sizeof *out);
    out->pol.low = low;
    dlb_amp_scaler_init(&out->pol.sc, DLB_AMP_SCALE_DYNAMIC, init_scale, 2.0f,
                        0.5f, 5);
    dlb_status s = dlb_model_create(spec, be, DLB_F32, 42, &m, &err);
    if (s == DLB_OK) {
        struct dlb_trainer tpl = {.model = m, .precision = &hooks,
                                  .precision_state = &out->pol,
                                  .precision_abi_minor = 1,
                                  .host_scaler = host_scaler};
        dlb_model_set_sgd(m, 0.01f, 0.9f);
        s = dlb_trainer_set_precision(&tpl, &err);
        out->on_device = !host_scaler && dlb_model_device_scaler(m);
        if (s == DLB_OK)
            s = dlb_train_run(&tpl, tr, &bs, NULL, STEPS, &out->loss, &secs,
                              &err);
    }
    if (s != DLB_OK)
        fprintf(stderr, "%s: %s\n", dlb_backend_name(be), err.msg);
    else
        fprintf(stderr, "%-4s %s %s scaler: loss %.9g, %llu skipped, %llu "
                "back-offs, final scale %g\n", dlb_backend_name(be),
                low == DLB_F16 ? "fp16" : "f32 ",
                out->on_device ? "device" : "host  ", out->loss,
                (unsigned long long)out->pol.sc.skipped,
                (unsigned long long)out->pol.sc.backoffs, out->pol.sc.scale);
    dlb_model_destroy(m);
    return s == DLB_OK;
}

static int same_scaler(const struct run *a, const struct run *b)
{
    return a->pol.sc.skipped == b->pol.sc.skipped &&
           a->pol.sc.backoffs == b->pol.sc.backoffs &&
           a->pol.sc.growths == b->pol.sc.growths &&
           a->pol.sc.scale == b->pol.sc.scale &&
           a->pol.sc.steps == STEPS && b->pol.sc.steps == STEPS;
}

static void check_training(void)
{
    const char *srcdir = getenv("srcdir");
    struct dlb_dataset tr;
    struct dlb_model_spec *spec = NULL;
    struct dlb_error err = {""};
    char path[1024];
    int synth = 0;
    snprintf(path, sizeof path, "%s/suites/models/lenet.ini",
             srcdir && *srcdir ? srcdir : ".");
    if (dlb_dataset_open("auto", NULL, 1, 42, &tr, &synth, &err) ||
        dlb_model_file_load(path, &spec, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        CHECK(0);
        return;
    }
    struct run d, h, c;
    CHECK(train(dev, spec, &tr, DLB_F32, 65536.0f, 0, &d) && d.on_device);
    CHECK(train(dev, spec, &tr, DLB_F32, 65536.0f, 1, &h) && !h.on_device);
    CHECK(train(host, spec, &tr, DLB_F32, 65536.0f, 0, &c) && !c.on_device);
    CHECK(same_scaler(&d, &h) && same_scaler(&d, &c));
    /* Not bit for bit: cuDNN's algorithms may sum with atomics. */
    CHECK_NEAR(d.loss, h.loss, 1e-4);
    CHECK_NEAR(d.loss, c.loss, 1e-3);
    char why[256] = "";
    struct dlb_backend *ref = NULL;
    if (DLB_BE_CALL(dev, supports, DLB_CAP_F16, why, sizeof why) != DLB_OK) {
        fprintf(stderr, "fp16 not run: %s\n", why);
    } else if (dlb_backend_open("ref", NULL, &ref, why, sizeof why) != DLB_OK) {
        fprintf(stderr, "ref: %s\n", why);
        CHECK(0);
    } else {
        CHECK(train(dev, spec, &tr, DLB_F16, 1048576.0f, 0, &d) && d.on_device);
        CHECK(train(dev, spec, &tr, DLB_F16, 1048576.0f, 1, &h));
        CHECK(train(ref, spec, &tr, DLB_F16, 1048576.0f, 0, &c));
        CHECK(d.pol.sc.skipped > 0 && d.pol.sc.skipped < STEPS);
        CHECK(same_scaler(&d, &h) && same_scaler(&d, &c));
        CHECK_NEAR(d.loss, h.loss, 1e-4);
        CHECK_NEAR(d.loss, c.loss, 2e-2);
        dlb_backend_close(ref);
    }
    dlb_model_spec_free(spec);
    dlb_dataset_free(&tr);
}

int main(void)
{
    struct dlb_backend_config cfg = {.seed = 42};
    struct dlb_rng rng;
    char why[512] = "";
    dev = gpu_open_or_skip(&cfg);
    if (dlb_backend_open("cpu", &cfg, &host, why, sizeof why) != DLB_OK &&
        dlb_backend_open("ref", &cfg, &host, why, sizeof why) != DLB_OK) {
        fprintf(stderr, "%s\n", why);
        return 1;
    }
    float *w = malloc(N * sizeof *w), *g = malloc(N * sizeof *g);
    float *v = malloc(N * sizeof *v);
    dlb_rng_seed(&rng, 7);
    for (size_t i = 0; i < N; i++) {
        w[i] = (float)(dlb_rng_double(&rng) - 0.5);
        g[i] = (float)((dlb_rng_double(&rng) - 0.5) * 3e4);
        v[i] = (float)(dlb_rng_double(&rng) - 0.5) * 0.1f;
    }
    check_unscale(g, 0);
    check_unscale(g, 1);
    check_sgd_if(w, g, v);
    check_post_wait();
    check_training();
    free(w);
    free(g);
    free(v);
    dlb_backend_close(dev);
    dlb_backend_close(host);
    return check_exit();
}
