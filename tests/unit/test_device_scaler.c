/* The trainer's device path of the gradient scaler (model_scaler.h,
 * trainer.c's dlb_trainer_settle), run on the CPU: the ref backend with
 * the scaler's two kernels (UNSCALE_CHECK, SGD_IF_FINITE) and its flag
 * entries added by this test, done synchronously with ref's own scale,
 * check_finite and sgd_update. The
 * arithmetic is ref's either way, so the device path must give exactly
 * what the host path gives on plain ref:
 *   - fp16 with dynamic scaling from a scale that overflows fp16 (steps
 *     skipped, the scale backed off, grown again after the interval): the
 *     same loss bit for bit, the same skipped steps and final scale, every
 *     step heard by the hook (the last one's flag read after the run);
 *   - loss_scale = none with gradients that turn inf/NaN: the hook wants
 *     every step applied, so the step the device skipped is applied late,
 *     from the same gradients: the same (diverged) weights;
 *   - a hook that vetoes a step with finite gradients is refused, since
 *     the device has applied it already.
 * The GPU twin is tests/gpu/test_cuda_scaler.c. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amp_scaler.h"
#include "backend/backend.h"
#include "backend/op_call.h"
#include "backend/backend_impl.h"
#include "data/dataset.h"
#include "train/model_scaler.h"
#include "train/train_run.h"

#define BATCH 8
#define STEPS 14

/* ---- ref with a device scaler ----------------------------------------- */

static struct dlb_backend *ref_be;
static struct dlb_backend_ops scaler_ops;
static int32_t posted_value, posted;
static unsigned posts, waits;

static const struct dlb_backend_ops *ref_ops(void)
{
    return dlb_backend_ops_of(ref_be);
}

static int32_t read_flag(struct dlb_backend *be, const struct dlb_buffer *f)
{
    int32_t v = -1;
    CHECK(ref_ops()->copy_to_host(be, &v, f, 0, sizeof v) == DLB_OK);
    return v;
}

static dlb_status t_unscale_check(struct dlb_backend *be, const struct dlb_op *o)
{
    int bad = 0;
    dlb_status s = DLB_OK;
    if (o->alpha != 1.0f)
        s = DLB_RUN(be, scale, o->count, o->y, o->alpha);
    if (s == DLB_OK)
        s = DLB_RUN(be, check_finite, o->count, o->y, &bad);
    if (s == DLB_OK && bad)
        s = DLB_RUN(be, fill, 1, o->found, 1.0);
    return s;
}

static dlb_status t_sgd_if(struct dlb_backend *be, const struct dlb_op *o)
{
    struct dlb_op sgd = *o;
    sgd.kind = DLB_OP_SGD;
    return read_flag(be, o->found) ? DLB_OK : dlb_backend_run(be, &sgd);
}

static dlb_status t_flag_post(struct dlb_backend *be,
                              const struct dlb_buffer *found)
{
    posted_value = read_flag(be, found);
    posted = 1;
    posts++;
    return DLB_OK;
}

static dlb_status t_flag_wait(struct dlb_backend *be, int32_t *value)
{
    (void)be;
    if (!posted)
        return DLB_ERR_INTERNAL;
    posted = 0;
    waits++;
    *value = posted_value;
    return DLB_OK;
}

static void t_destroy(struct dlb_backend *be)
{
    (void)be; /* the context is ref_be's, closed with it */
}

/* A second handle on ref's context whose table has the scaler: ref's
 * kernels and two of the test's. */
static struct dlb_backend *open_scaler_be(void)
{
    static struct dlb_kernel kernels[64];
    struct dlb_backend *be = NULL;
    char why[256] = "";
    const struct dlb_backend_ops *r = ref_ops();
    size_t n = r->n_kernels < 62 ? r->n_kernels : 62;
    memcpy(kernels, r->kernels, n * sizeof *kernels);
    kernels[n++] = (struct dlb_kernel){"test", DLB_OP_UNSCALE_CHECK,
                                       DLB_PROPS(DLB_PROP_NONE), NULL,
                                       t_unscale_check};
    kernels[n++] = (struct dlb_kernel){"test", DLB_OP_SGD_IF_FINITE,
                                       DLB_PROPS(DLB_PROP_NONE), NULL, t_sgd_if};
    scaler_ops = *r;
    scaler_ops.name = "ref+scaler";
    scaler_ops.destroy = t_destroy;
    scaler_ops.kernels = kernels;
    scaler_ops.n_kernels = n;
    scaler_ops.flag_post = t_flag_post;
    scaler_ops.flag_wait = t_flag_wait;
    if (dlb_backend_new(&scaler_ops, dlb_backend_ctx(ref_be), &be, why,
                        sizeof why) != DLB_OK)
        fprintf(stderr, "%s\n", why);
    return be;
}

/* ---- the precision hook: the amp plugin's scaler ---------------------- */

struct policy {
    struct dlb_amp_scaler sc;
    enum dlb_dtype low; /* the amp plugin's policy in this type */
    int veto;           /* skip every step, finite or not */
    unsigned heard;
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
    struct policy *p = st;
    p->heard++;
    int apply = dlb_amp_scaler_update(&p->sc, nonfinite);
    return p->veto ? 0 : apply;
}

static void p_reset(void *st)
{
    struct policy *p = st;
    dlb_amp_scaler_reset(&p->sc);
    p->heard = 0;
}

static const struct dlb_precision_hooks hooks = {
    p_type, p_scale, p_after, p_reset, NULL,
};

/* ---- runs -------------------------------------------------------------- */

struct run {
    dlb_status status;
    double loss;
    float w0;            /* the first weight after training */
    struct policy pol;
};

static void train(struct dlb_backend *be, const struct dlb_model_spec *spec,
                  const struct dlb_dataset *tr, enum dlb_dtype low,
                  enum dlb_amp_scale_mode mode, float init_scale, float lr,
                  int veto, struct run *out)
{
    struct dlb_model *m = NULL;
    struct dlb_error err = {""};
    struct dlb_batch_spec bs = {BATCH, 1, 0, 1, 42};
    double secs = 0;
    memset(out, 0, sizeof *out);
    dlb_amp_scaler_init(&out->pol.sc, mode, init_scale, 2.0f, 0.5f, 3);
    out->pol.veto = veto;
    out->pol.low = low;
    out->status = dlb_model_create(spec, be, DLB_F32, 42, &m, &err);
    if (out->status == DLB_OK) {
        struct dlb_trainer tpl = {.model = m, .precision = &hooks,
                                  .precision_state = &out->pol,
                                  .precision_abi_minor = 1};
        dlb_model_set_sgd(m, lr, 0.9f);
        out->status = dlb_trainer_set_precision(&tpl, &err);
        if (out->status == DLB_OK)
            out->status = dlb_train_run(&tpl, tr, &bs, NULL, STEPS, &out->loss,
                                        &secs, &err);
        const struct dlb_model_tensor *t0 = dlb_model_tensor_at(m, 0);
        if (out->status == DLB_OK)
            CHECK(ref_ops()->copy_to_host(be, &out->w0, t0->buf, 0,
                                          sizeof out->w0) == DLB_OK);
    }
    if (out->status != DLB_OK)
        fprintf(stderr, "%s: %s\n", dlb_backend_name(be), err.msg);
    dlb_model_destroy(m);
}

static int same_float(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

int main(void)
{
    const char *srcdir = getenv("srcdir");
    char path[1024], why[256] = "";
    struct dlb_dataset tr;
    struct dlb_model_spec *spec = NULL;
    struct dlb_error err = {""};
    int announced = 0;
    snprintf(path, sizeof path, "%s/suites/models/lenet.ini",
             srcdir && *srcdir ? srcdir : ".");
    if (dlb_backend_open("ref", NULL, &ref_be, why, sizeof why) != DLB_OK ||
        dlb_dataset_open("synthetic", NULL, 1, 42, &tr, &announced, &err) ||
        dlb_model_file_load(path, &spec, &err)) {
        fprintf(stderr, "%s%s\n", why, err.msg);
        return 1;
    }
    struct dlb_backend *dev = open_scaler_be();
    CHECK(dev != NULL);
    if (!dev)
        return check_exit();

    /* fp16 from 2^20, far above what fp16 gradients hold (65504): skipped
     * steps and back-offs, growth after 3 clean steps, some of which
     * overflow again. */
    struct run host, devp;
    train(ref_be, spec, &tr, DLB_F16, DLB_AMP_SCALE_DYNAMIC, 1048576.0f, 0.01f,
          0, &host);
    train(dev, spec, &tr, DLB_F16, DLB_AMP_SCALE_DYNAMIC, 1048576.0f, 0.01f, 0,
          &devp);
    CHECK(host.status == DLB_OK && devp.status == DLB_OK);
    fprintf(stderr, "dynamic: host path loss %.9g, %llu skipped, scale %g; "
            "device path loss %.9g, %llu skipped, scale %g\n", host.loss,
            (unsigned long long)host.pol.sc.skipped, host.pol.sc.scale,
            devp.loss, (unsigned long long)devp.pol.sc.skipped,
            devp.pol.sc.scale);
    CHECK(host.pol.sc.skipped > 0 && host.pol.sc.skipped < STEPS);
    CHECK(host.pol.sc.backoffs > 0);
    CHECK(devp.loss == host.loss && devp.w0 == host.w0);
    CHECK(devp.pol.sc.skipped == host.pol.sc.skipped);
    CHECK(devp.pol.sc.scale == host.pol.sc.scale);
    CHECK(devp.pol.sc.growths == host.pol.sc.growths);
    CHECK(devp.pol.heard == STEPS && host.pol.heard == STEPS);
    CHECK(posts == STEPS && waits == STEPS);

    /* No scaling, and a learning rate that makes the gradients overflow:
     * the hook applies every step; the device skipped those with inf/NaN
     * and the trainer applies them late, so the weights end the same. */
    train(ref_be, spec, &tr, DLB_F32, DLB_AMP_SCALE_NONE, 1.0f, 1e30f, 0, &host);
    train(dev, spec, &tr, DLB_F32, DLB_AMP_SCALE_NONE, 1.0f, 1e30f, 0, &devp);
    CHECK(host.status == DLB_OK && devp.status == DLB_OK);
    fprintf(stderr, "none, diverging: host w0 %g loss %g; device w0 %g loss "
            "%g\n", host.w0, host.loss, devp.w0, devp.loss);
    CHECK(!isfinite(host.w0));
    CHECK(same_float(devp.w0, host.w0) && same_float(devp.loss, host.loss));
    CHECK(devp.pol.sc.skipped == 0);

    /* A hook that vetoes clean steps cannot be honoured on the device. */
    train(dev, spec, &tr, DLB_F32, DLB_AMP_SCALE_STATIC, 1.0f, 0.01f, 1, &devp);
    CHECK(devp.status == DLB_ERR_INTERNAL);

    dlb_backend_close(dev);
    dlb_backend_close(ref_be);
    dlb_model_spec_free(spec);
    dlb_dataset_free(&tr);
    return check_exit();
}
