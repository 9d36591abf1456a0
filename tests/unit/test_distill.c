/* Knowledge distillation: the core's soft-target step and the distill
 * plugin (compiled in, against the core's real host).
 *
 * Facts a user relies on:
 *  - the gradient the step starts backward with is the gradient of the
 *    blended loss (1 - alpha) NLL + alpha T^2 KL at the logits: checked on
 *    random logits against central differences of dlb_distill_loss in
 *    double (h = 1e-4), |analytic - numeric| <= 2e-6 (the analytic one is
 *    fp32: rounding ~1e-7 on gradients below 1), for several T and alpha;
 *    and the loss the step reports is that loss;
 *  - alpha = 0 is the baseline step bit for bit: same weights after steps
 *    of LeNet on ref (and cpu when built);
 *  - the plugin's teacher cache gives the student the same weights as the
 *    teacher computed at every step, bit for bit on ref, with augmentation
 *    off (every lookup hits) and on (augmented images miss and are
 *    computed);
 *  - an unknown teacher is refused by probe, naming it. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "child/host.h"
#include "data/batches.h"
#include "train/distill_loss.h"
#include "services/model_distill.h"
#include "util/rng.h"

const struct dlb_plugin *dlb_plugin_entry(void);

static struct dlb_backend *be;

static struct dlb_model_spec *load_spec(const char *rel)
{
    const char *srcdir = getenv("srcdir");
    char path[1024];
    struct dlb_model_spec *s = NULL;
    struct dlb_error err = {""};
    snprintf(path, sizeof path, "%s/%s", srcdir && *srcdir ? srcdir : ".", rel);
    if (dlb_model_file_load(path, &s, &err) != DLB_OK)
        fprintf(stderr, "%s\n", err.msg);
    CHECK(s != NULL);
    return s;
}

static struct dlb_model *make(const struct dlb_model_spec *s, uint64_t seed)
{
    struct dlb_model *m = NULL;
    struct dlb_error err = {""};
    if (dlb_model_create(s, be, DLB_F32, seed, &m, &err) != DLB_OK)
        fprintf(stderr, "%s\n", err.msg);
    CHECK(m != NULL);
    return m;
}

static void read_buf(const struct dlb_buffer *b, float *out, size_t count)
{
    CHECK(dlb_backend_ops_of(be)->copy_to_host(be, out, b, 0,
                                               count * sizeof *out) == DLB_OK);
}

/* ---- the gradient at the logits ------------------------------------- */

enum { GN = 4, GC = 5 }; /* images (= inputs of fc), classes */

static void check_grad(struct dlb_model *m, float temperature, float alpha,
                       uint64_t seed)
{
    float w[GC * GN], zero[GC] = {0}, eye[GN * GN] = {0}, t[GN * GC], dw[GC * GN];
    double z[GN * GC], td[GN * GC], loss = 0.0;
    int32_t labels[GN];
    struct dlb_buffer *wv, *wg, *wm;
    struct dlb_error err = {""};
    struct dlb_rng r;
    dlb_rng_seed(&r, seed);
    for (int i = 0; i < GC * GN; i++) {
        w[i] = (float)(3.0 * dlb_rng_normal(&r));
        t[i] = (float)(3.0 * dlb_rng_normal(&r));
    }
    for (int j = 0; j < GN; j++) {
        eye[j * GN + j] = 1.0f;
        labels[j] = (int32_t)dlb_rng_below(&r, GC);
    }
    /* logits z[j][o] = w[o][j] (bias 0, image j the unit vector e_j) */
    for (int j = 0; j < GN; j++)
        for (int o = 0; o < GC; o++) {
            z[j * GC + o] = w[o * GN + j];
            td[j * GC + o] = t[j * GC + o];
        }
    CHECK(dlb_model_tensor_io(m, "fc.weight", w, GC * GN, 1, &err) == DLB_OK);
    CHECK(dlb_model_tensor_io(m, "fc.bias", zero, GC, 1, &err) == DLB_OK);
    CHECK(dlb_model_distill_forward_backward(m, eye, labels, GN, t, temperature,
                                             alpha, &loss, &err) == DLB_OK);
    CHECK(dlb_model_find(m, "fc.weight", &wv, &wg, &wm) == DLB_OK);
    read_buf(wg, dw, GC * GN);
    double want = dlb_distill_loss(z, td, labels, GN, GC, temperature, alpha);
    CHECK_NEAR(loss, want, 1e-5);
    double worst = 0.0;
    for (int j = 0; j < GN; j++)
        for (int o = 0; o < GC; o++) {
            const double hh = 1e-4;
            double *zk = &z[j * GC + o], keep = *zk;
            *zk = keep + hh;
            double up = dlb_distill_loss(z, td, labels, GN, GC, temperature, alpha);
            *zk = keep - hh;
            double down = dlb_distill_loss(z, td, labels, GN, GC, temperature,
                                           alpha);
            *zk = keep;
            double num = (up - down) / (2 * hh), got = dw[o * GN + j];
            if (fabs(got - num) > worst)
                worst = fabs(got - num);
        }
    if (worst > 2e-6)
        fprintf(stderr, "T %g alpha %g: gradient at the logits off by %g\n",
                (double)temperature, (double)alpha, worst);
    CHECK(worst <= 2e-6);
}

static void test_gradient(void)
{
    static const float cases[][2] = {{1, 0}, {4, 0.9f}, {2, 0.5f}, {8, 1},
                                     {0.5f, 0.3f}};
    struct dlb_model_spec *s = load_spec("tests/unit/models/logits.ini");
    struct dlb_model *m = s ? make(s, 3) : NULL;
    for (size_t k = 0; m && k < sizeof cases / sizeof cases[0]; k++)
        check_grad(m, cases[k][0], cases[k][1], 100 + k);
    /* Bad settings are refused, not trained with. */
    float img[GN * GN] = {0}, t[GN * GC] = {0};
    int32_t lab[GN] = {0};
    struct dlb_error err = {""};
    if (m) {
        CHECK(dlb_model_distill_step(m, img, lab, GN, t, 0.0f, 0.5f, NULL,
                                     &err) == DLB_ERR_INPUT);
        CHECK(dlb_model_distill_step(m, img, lab, GN, t, 2.0f, 1.5f, NULL,
                                     &err) == DLB_ERR_INPUT);
        CHECK(dlb_model_distill_step(m, img, lab, GN, NULL, 2.0f, 0.5f, NULL,
                                     &err) == DLB_ERR_INPUT);
    }
    dlb_model_destroy(m);
    dlb_model_spec_free(s);
}

/* ---- alpha = 0 is the baseline step ----------------------------------- */

/* 1 when every checkpointed tensor of a and b has the same bits. */
static int same_weights(struct dlb_model *a, struct dlb_model *b)
{
    int same = dlb_model_n_tensors(a) == dlb_model_n_tensors(b);
    for (size_t i = 0; same && i < dlb_model_n_tensors(a); i++) {
        const struct dlb_model_tensor *ta = dlb_model_tensor_at(a, i);
        const struct dlb_model_tensor *tb = dlb_model_tensor_at(b, i);
        float *x = malloc(ta->count * sizeof *x), *y = malloc(tb->count * sizeof *y);
        same = x && y && ta->count == tb->count;
        if (same) {
            read_buf(ta->buf, x, ta->count);
            read_buf(tb->buf, y, tb->count);
            same = memcmp(x, y, ta->count * sizeof *x) == 0;
        }
        free(x);
        free(y);
    }
    return same;
}

static void test_alpha_zero(const struct dlb_dataset *train)
{
    struct dlb_model_spec *s = load_spec("suites/models/lenet.ini");
    struct dlb_model *a = s ? make(s, 42) : NULL, *b = s ? make(s, 42) : NULL;
    struct dlb_batch_spec spec = {64, 1, 0, 1, 42};
    struct dlb_batches *bs = NULL;
    struct dlb_error err = {""};
    float *t = calloc(64 * 10, sizeof *t);
    if (!a || !b || !t ||
        dlb_batches_open(train, &spec, NULL, &bs, &err) != DLB_OK) {
        CHECK(!"alpha = 0 setup");
        goto out;
    }
    for (int k = 0; k < 4; k++) {
        struct dlb_batch bt;
        double la = 0.0, lb = 0.0;
        CHECK(dlb_batches_next(bs, &bt, &err) == DLB_OK);
        CHECK(dlb_model_forward_backward(a, bt.images, bt.labels, bt.n, 1.0f,
                                         &la, &err) == DLB_OK);
        CHECK(dlb_model_sgd_step(a, &err) == DLB_OK);
        CHECK(dlb_model_distill_step(b, bt.images, bt.labels, bt.n, t, 4.0f,
                                     0.0f, &lb, &err) == DLB_OK);
        CHECK_NEAR(lb, la, 1e-6); /* host double vs backend fp32 */
    }
    if (!same_weights(a, b))
        fprintf(stderr, "%s: alpha = 0 differs from the baseline step\n",
                dlb_backend_name(be));
    CHECK(same_weights(a, b));
out:
    dlb_batches_close(bs);
    free(t);
    dlb_model_destroy(a);
    dlb_model_destroy(b);
    dlb_model_spec_free(s);
}

/* ---- the plugin: teacher cache on and off ----------------------------- */

struct lender {
    struct dlb_dataset *train, *test;
};

static dlb_status lend_dataset(void *ctx, int train,
                               const struct dlb_dataset **out,
                               struct dlb_error *err)
{
    const struct lender *l = ctx;
    (void)err;
    *out = train ? l->train : l->test;
    return DLB_OK;
}

static dlb_status lend_evaluate(void *ctx, struct dlb_model *m, double *loss,
                                double *acc, struct dlb_error *err)
{
    const struct lender *l = ctx;
    return dlb_model_evaluate(m, l->test, 500, loss, acc, NULL, err);
}

/* The teacher: the model file with its initial weights of another seed
 * (no reference training in a unit test; any fixed teacher will do). */
static dlb_status lend_open_model(void *ctx, const struct dlb_host *h,
                                  const char *name, uint64_t steps,
                                  struct dlb_model_spec **spec,
                                  struct dlb_model **out,
                                  struct dlb_error *err)
{
    char rel[300];
    (void)ctx, (void)h, (void)steps;
    snprintf(rel, sizeof rel, "suites/models/%s.ini", name);
    *spec = load_spec(rel);
    if (!*spec)
        return dlb_errorf(err, DLB_ERR_INPUT, "no model %s", name);
    return dlb_model_create(*spec, be, DLB_F32, 7, out, err);
}

static struct dlb_value val(const char *s, int64_t i, double f)
{
    return (struct dlb_value){i, f, s};
}

static double figure(struct dlb_host_shared *sh, const char *name)
{
    json_t *v = json_object_get(json_object_get(sh->metrics, name), "value");
    return v ? json_real_value(v) : -1.0;
}

/* Train a fresh LeNet for `steps` through the plugin; its weights stay in
 * *student for the caller. */
static void run_plugin(const struct dlb_host *h, struct dlb_host_shared *sh,
                       const struct dlb_host_data *data,
                       const struct dlb_model_spec *s, int cache, int augment,
                       struct dlb_model **student)
{
    const struct dlb_plugin *p = dlb_plugin_entry();
    struct dlb_value v[5] = {val("lenet", 0, 0), val("2", 2, 2.0),
                             val("0.7", 0, 0.7), val(cache ? "on" : "off",
                                                     cache, cache),
                             val("0", 0, 0)};
    struct dlb_params prm = {p->params, v, p->n_params};
    struct dlb_batch_spec spec = {64, 1, augment, 1, 42};
    struct dlb_batches *bs = NULL;
    struct dlb_error err = {""};
    char why[400] = "";
    void *state = NULL;
    CHECK(p->n_params == 5);
    *student = make(s, 42);
    dlb_host_set_data(h, data);
    CHECK(p->probe(h, &prm, why, sizeof why) == DLB_OK);
    CHECK(p->init(h, &prm, &state) == DLB_OK);
    CHECK(dlb_batches_open(((const struct lender *)data->ctx)->train, &spec,
                           NULL, &bs, &err) == DLB_OK);
    for (int k = 0; state && bs && *student && k < 5; k++) {
        struct dlb_batch b;
        CHECK(dlb_batches_next(bs, &b, &err) == DLB_OK);
        CHECK(p->executor->train_step(state, h, *student, &b) == DLB_OK);
    }
    CHECK(p->metrics(state, h) == DLB_OK);
    CHECK(figure(sh, "distill.steps") == 5);
    CHECK(figure(sh, "distill.teacher_params") > 0);
    CHECK(figure(sh, "distill.student_infer_ips") > 0);
    CHECK(figure(sh, "distill.teacher_accuracy") >= 0);
    /* An augmented image hits only when its draw left it as it was. */
    if (cache && !augment)
        CHECK(figure(sh, "distill.cache_hit_rate") == 100);
    if (cache && augment)
        CHECK(figure(sh, "distill.cache_hit_rate") < 50);
    /* The workload ends before fini: the core closes the teacher. */
    dlb_host_set_data(h, NULL);
    p->fini(state);
    dlb_batches_close(bs);
    json_object_clear(sh->metrics);
}

static void test_plugin(const struct dlb_host *h, struct dlb_host_shared *sh,
                        struct lender *l)
{
    const struct dlb_host_data data = {l, lend_dataset, lend_evaluate,
                                       lend_open_model};
    struct dlb_model_spec *s = load_spec("suites/models/lenet.ini");
    for (int augment = 0; s && augment <= 1; augment++) {
        struct dlb_model *on = NULL, *off = NULL;
        run_plugin(h, sh, &data, s, 1, augment, &on);
        run_plugin(h, sh, &data, s, 0, augment, &off);
        if (on && off && !same_weights(on, off))
            fprintf(stderr, "augment %d: teacher cache on and off train "
                    "different students\n", augment);
        CHECK(on && off && same_weights(on, off));
        dlb_model_destroy(on);
        dlb_model_destroy(off);
    }
    dlb_model_spec_free(s);

    /* An unknown teacher: probe says which and where it looked. */
    const struct dlb_plugin *p = dlb_plugin_entry();
    struct dlb_value v[5] = {val("no-such-net", 0, 0), val("4", 4, 4.0),
                             val("0.9", 0, 0.9), val("on", 1, 1),
                             val("0", 0, 0)};
    struct dlb_params prm = {p->params, v, p->n_params};
    char why[400] = "";
    CHECK(p->probe(h, &prm, why, sizeof why) == DLB_ERR_INPUT);
    CHECK(strstr(why, "no-such-net") != NULL);
}

int main(void)
{
    struct dlb_backend_config cfg = {.seed = 42};
    struct dlb_host_shared shared = {0};
    struct dlb_host_priv hp;
    struct dlb_dataset train, test;
    char why[512];
    if (dlb_backend_open("ref", &cfg, &be, why, sizeof why) != DLB_OK ||
        dlb_dataset_synthetic(512, 42, 1, &train) != DLB_OK ||
        dlb_dataset_synthetic(256, 42, 0, &test) != DLB_OK) {
        fprintf(stderr, "test_distill: setup failed: %s\n", why);
        return 1;
    }
    shared.metrics = json_object();
    dlb_host_setup(&hp, &shared, "distill", 42, 1);
    test_gradient();
    test_alpha_zero(&train);
    struct lender l = {&train, &test};
    test_plugin(&hp.pub, &shared, &l);
    dlb_backend_close(be);
    /* The baseline step on oneDNN, where it is built. */
    if (dlb_backend_open("cpu", &cfg, &be, why, sizeof why) == DLB_OK) {
        test_alpha_zero(&train);
        dlb_backend_close(be);
    }
    json_decref(shared.metrics);
    dlb_dataset_free(&train);
    dlb_dataset_free(&test);
    return check_exit();
}
