/* The model interface's 2.1 entries (model_api.h), against ground truth:
 *   - open's backend and precision: a clone on "ref" lives there; bf16
 *     and fp16 compute in the low type (logits near the fp32 clone's,
 *     not equal to them); unknown names are DLB_ERR_INPUT, a backend or
 *     type the machine lacks DLB_ERR_UNSUPPORTED with a message; a 2.0
 *     plugin's shorter struct is read only as far as it reaches; a named
 *     model moved to another backend keeps its weights and statistics
 *     bit for bit;
 *   - tensor ids: learnable, statistics, optimizer state in that order;
 *     after training steps the statistics and momentum read by id are
 *     state_io's parts bit for bit, and momentum is momentum x its value
 *     before the step + the gradient, rounded once (ref); writes reach
 *     the model; bad ids, roles and counts give statuses;
 *   - the loader takes a 2.0 plugin and refuses a 1.x one, naming both
 *     versions;
 *   - ranges: [0, n) in one, two or three ranges gives the same loss,
 *     log-probabilities, gradients at the cuts and parameter gradients
 *     bit for bit (ref), with dropout drawn once per pass; the whole
 *     range is forward_backward to fp32 rounding; the loss scale scales
 *     the gradients; bad ranges, a backward without its forward, missing
 *     arrays, a cut two tensors cross and a bf16 model give statuses.
 * Expected: all hold. Bugs they guard against: a 2.0 plugin's struct read
 * past its end, ids off between kinds, a range pass drawing dropout per
 * range, gradients of one range overwriting another's. */
#include "check.h"
#include "plugin_fixture.h"

#include <math.h>
#include <stddef.h>

#include <dlbench/model_api.h>

#include "child/host_api.h"
#include "suite/registry.h"

enum { N = 6, PER = 2 * 8 * 8, K = 5 };

static int backend_is(const struct dlb_model *m, const char *name)
{
    return !strcmp(dlb_backend_name(dlb_model_backend(m)), name);
}

static struct dlb_model *open_on(const struct dlb_host *h,
                                 const struct dlb_model *m,
                                 const char *backend, const char *precision,
                                 dlb_status *st)
{
    struct dlb_model_open how = {sizeof how, m, 1, -1, NULL, 0, backend,
                                 precision};
    struct dlb_model *c = NULL;
    *st = h->model_api->open(h, &how, &c);
    CHECK((*st == DLB_OK) == (c != NULL));
    return c;
}

/* ---- open ---------------------------------------------------------- */

static void test_open(const struct dlb_host *h, struct dlb_model *m,
                      const struct dlb_model_spec *sp)
{
    const struct dlb_model_api *a = h->model_api;
    static float img[N * PER], lf[N * K], lb[N * K];
    static int32_t labels[N];
    struct dlb_batch b;
    dlb_status s;
    make_batch(sp, 1, N, img, labels, &b);
    struct dlb_model *f = open_on(h, m, "ref", "fp32", &s);
    CHECK(s == DLB_OK && f && backend_is(f, "ref"));
    CHECK(f && a->infer(h, f, img, N, DLB_OUT_LOGITS, lf) == DLB_OK);
    static const char *const low[] = {"bf16", "fp16"};
    for (int t = 0; t < 2; t++) {
        struct dlb_model *c = open_on(h, m, "ref", low[t], &s);
        CHECK(s == DLB_OK && c && backend_is(c, "ref"));
        if (!c)
            continue;
        CHECK(a->infer(h, c, img, N, DLB_OUT_LOGITS, lb) == DLB_OK);
        int differ = 0;
        for (int i = 0; i < N * K; i++) {
            CHECK_NEAR(lb[i], lf[i], 0.05);
            differ |= lb[i] != lf[i];
        }
        CHECK(differ); /* it did compute in the low type */
        /* Ranges take fp32 models without a policy. */
        CHECK(a->forward_range(h, c, 0, 2, N, img, NULL, lb, NULL) ==
              DLB_ERR_UNSUPPORTED);
        a->release(h, c);
    }
    a->release(h, f);
    CHECK(!open_on(h, m, "nosuch", NULL, &s) && s == DLB_ERR_INPUT);
    CHECK(strstr(dlb_host_last_error(h), "nosuch") != NULL);
    CHECK(!open_on(h, m, NULL, "int4", &s) && s == DLB_ERR_INPUT);
    CHECK(strstr(dlb_host_last_error(h), "int4") != NULL);
    /* Machines differ: where the backend or the type is missing, the
     * status says so with a reason; never a crash or another type. */
    const char *probe[][2] = {{"cuda", NULL}, {NULL, "bf16"}};
    for (int k = 0; k < 2; k++) {
        h->model_api->release(h, open_on(h, m, probe[k][0], probe[k][1], &s));
        CHECK(s == DLB_OK || s == DLB_ERR_UNSUPPORTED);
        if (s != DLB_OK)
            CHECK(strlen(dlb_host_last_error(h)) > 10);
    }
    /* A 2.0 plugin's struct ends before backend: what lies beyond it in
     * its memory is not read. */
    struct {
        struct dlb_model_open how;
        char beyond[64];
    } old;
    memset(&old, 0x5a, sizeof old);
    old.how = (struct dlb_model_open){offsetof(struct dlb_model_open, backend),
                                      m, 1, -1, NULL, 0,
                                      (const char *)(uintptr_t)1,
                                      (const char *)(uintptr_t)1};
    struct dlb_model *c = NULL;
    CHECK(a->open(h, &old.how, &c) == DLB_OK && c &&
          backend_is(c, h->backend_name));
    a->release(h, c);
    old.how.struct_size = 4;
    CHECK(a->open(h, &old.how, &c) == DLB_ERR_INPUT && !c);
}

/* A workload that lends named models: the model file, trained one step
 * on the host's backend, so that its weights and statistics differ from
 * any seed's. */
struct lender {
    struct dlb_backend *be;   /* the workload's: every lent model's */
};

static dlb_status lend(void *ctx, const struct dlb_host *h, const char *name,
                       uint64_t steps, struct dlb_model_spec **spec,
                       struct dlb_model **out, struct dlb_error *err)
{
    struct lender *l = ctx;
    static float img[N * PER];
    static int32_t labels[N];
    struct dlb_batch b;
    (void)h;
    (void)steps;
    *spec = spec_load(name);
    if (!*spec)
        return dlb_errorf(err, DLB_ERR_INPUT, "cannot open %s", name);
    dlb_status s = dlb_model_create(*spec, l->be, DLB_F32, SEED, out, err);
    if (s != DLB_OK)
        return s;
    make_batch(*spec, 9, N, img, labels, &b);
    s = dlb_model_forward_backward(*out, img, labels, N, 1.0f, NULL, err);
    return s == DLB_OK ? dlb_model_sgd_step(*out, err) : s;
}

static void test_open_named(const struct dlb_host *h)
{
    const struct dlb_model_api *a = h->model_api;
    struct dlb_backend_config cfg = {.threads = 1, .seed = SEED};
    struct lender l = {NULL};
    char why[256];
    CHECK(dlb_backend_open(h->backend_name, &cfg, &l.be, why, sizeof why) ==
          DLB_OK);
    struct dlb_host_data data = {.ctx = &l, .open_model = lend};
    struct dlb_model_open how = {sizeof how, NULL, 1, -1,
                                 "tests/unit/models/tiny.ini", 0, NULL, NULL};
    struct dlb_model *here = NULL, *there = NULL;
    unsigned parts = DLB_STATE_WEIGHTS | DLB_STATE_STATS;
    size_t n1 = 0, n2 = 0;
    dlb_host_set_data(h, &data);
    CHECK(a->open(h, &how, &here) == DLB_OK && here);
    how.backend = "ref";
    CHECK(a->open(h, &how, &there) == DLB_OK && there);
    if (here && there) {
        CHECK(backend_is(there, "ref"));
        CHECK(a->state_count(h, here, 0, DLB_NODES_ALL, parts, &n1) == DLB_OK);
        CHECK(a->state_count(h, there, 0, DLB_NODES_ALL, parts, &n2) == DLB_OK);
        CHECK(n1 == n2 && n1 > 0);
        float *x = malloc(n1 * sizeof *x), *y = malloc(n1 * sizeof *y);
        CHECK(x && y);
        CHECK(a->state_io(h, here, 0, DLB_NODES_ALL, parts, x, n1, 0) == 0);
        CHECK(a->state_io(h, there, 0, DLB_NODES_ALL, parts, y, n1, 0) == 0);
        CHECK(!memcmp(x, y, n1 * sizeof *x));
        free(x);
        free(y);
    }
    a->release(h, there);
    how.backend = "nosuch";
    CHECK(a->open(h, &how, &there) == DLB_ERR_INPUT && !there);
    dlb_host_set_data(h, NULL); /* closes `here` */
    dlb_backend_close(l.be);
}

/* ---- tensor ids ------------------------------------------------------ */

static float *read_id(const struct dlb_host *h, struct dlb_model *m,
                      unsigned id, enum dlb_tensor_role role, size_t *count)
{
    struct dlb_tensor_desc d = {.struct_size = sizeof d};
    CHECK(h->model_api->tensor_desc(h, m, id, &d) == DLB_OK);
    float *v = malloc((d.count ? d.count : 1) * sizeof *v);
    CHECK(v && h->model_api->tensor_io(h, m, id, role, v, d.count, 0) ==
                   DLB_OK);
    *count = d.count;
    return v;
}

static void test_tensor_ids(const struct dlb_host *h, struct dlb_model *m,
                            const struct dlb_model_spec *sp)
{
    const struct dlb_model_api *a = h->model_api;
    static float img[N * PER];
    static int32_t labels[N];
    struct dlb_batch b;
    unsigned nl = a->tensor_count(h, m), all = a->tensor_count_all(h, m);
    float lr, mu;
    CHECK(nl == 8 && all == 2 * nl + 2); /* tiny.ini: bn1's two */
    CHECK(a->optimizer(h, m, &lr, &mu) == DLB_OK && mu > 0);
    /* Kinds, names, shapes, the optimizer's owner. */
    for (unsigned id = 0; id < all; id++) {
        struct dlb_tensor_desc d = {.struct_size = sizeof d};
        struct dlb_param_info pi;
        CHECK(a->tensor_desc(h, m, id, &d) == DLB_OK);
        size_t prod = 1;
        for (unsigned k = 0; k < d.ndim; k++)
            prod *= d.shape[k];
        CHECK(d.ndim >= 1 && prod == d.count && d.dtype == DLB_F32);
        if (id < nl) {
            CHECK(d.kind == DLB_TENSOR_KIND_WEIGHTS && d.of == -1);
            CHECK(a->tensor_info(h, m, id, &pi) == DLB_OK &&
                  !strcmp(pi.name, d.name) && pi.layer == d.layer);
        } else if (id < nl + 2) {
            CHECK(d.kind == DLB_TENSOR_KIND_STATISTICS && d.of == -1);
            CHECK(!strcmp(d.name, id == nl ? "bn1.running_mean"
                                           : "bn1.running_var"));
            CHECK(d.layer == 1 && d.count == 3);
        } else {
            char want[128];
            CHECK(d.kind == DLB_TENSOR_KIND_OPTIMIZER);
            CHECK(d.of == (int)(id - nl - 2));
            CHECK(a->tensor_info(h, m, (unsigned)d.of, &pi) == DLB_OK);
            snprintf(want, sizeof want, "%s.momentum", pi.name);
            CHECK(!strcmp(d.name, want) && d.count == pi.count);
        }
    }
    /* Two steps: the second's momentum starts from a nonzero one. */
    for (int step = 0; step < 2; step++) {
        float *v0[8], *g[8];
        size_t c[8];
        make_batch(sp, 20 + (uint64_t)step, N, img, labels, &b);
        CHECK(a->forward_backward(h, m, img, labels, N, 1.0f, NULL, NULL,
                                  NULL) == DLB_OK);
        for (unsigned j = 0; j < nl; j++) {
            v0[j] = read_id(h, m, nl + 2 + j, DLB_TENSOR_VALUE, &c[j]);
            g[j] = read_id(h, m, j, DLB_TENSOR_GRAD, &c[j]);
        }
        CHECK(a->step(h, m) == DLB_OK);
        size_t wrong = 0;
        for (unsigned j = 0; j < nl; j++) {
            size_t cj;
            float *v = read_id(h, m, nl + 2 + j, DLB_TENSOR_VALUE, &cj);
            for (size_t i = 0; i < cj; i++) {
                float want = (float)((double)mu * v0[j][i] + g[j][i]);
                /* ref rounds once; oneDNN's fp32 update may round twice */
                wrong += backend_is(m, "ref")
                             ? memcmp(&v[i], &want, sizeof want) != 0
                             : fabsf(v[i] - want) > 1e-6f * (1 + fabsf(want));
            }
            free(v);
            free(v0[j]);
            free(g[j]);
        }
        CHECK(wrong == 0);
    }
    /* Statistics and momentum by id are state_io's parts. */
    unsigned parts[2] = {DLB_STATE_STATS, DLB_STATE_MOMENTUM};
    unsigned from[2] = {nl, nl + 2}, to[2] = {nl + 2, all};
    for (int p = 0; p < 2; p++) {
        size_t n = 0, off = 0;
        CHECK(a->state_count(h, m, 0, DLB_NODES_ALL, parts[p], &n) == DLB_OK);
        float *flat = malloc(n * sizeof *flat);
        CHECK(flat && a->state_io(h, m, 0, DLB_NODES_ALL, parts[p], flat, n,
                                  0) == DLB_OK);
        for (unsigned id = from[p]; id < to[p]; id++) {
            size_t c;
            float *v = read_id(h, m, id, DLB_TENSOR_VALUE, &c);
            CHECK(off + c <= n && !memcmp(v, flat + off, c * sizeof *v));
            off += c;
            free(v);
        }
        CHECK(off == n);
        free(flat);
    }
    /* Writes: the running variance by id is what state_io then reads,
     * and it counts as a change from outside. */
    float var[3] = {0.25f, 1.5f, 3.0f}, st[6];
    uint64_t ver = a->weights_version(h, m);
    CHECK(a->tensor_io(h, m, nl + 1, DLB_TENSOR_VALUE, var, 3, 1) == DLB_OK);
    CHECK(a->weights_version(h, m) != ver);
    CHECK(a->state_io(h, m, 0, DLB_NODES_ALL, DLB_STATE_STATS, st, 6, 0) ==
          DLB_OK && !memcmp(st + 3, var, sizeof var));
    /* Bad requests. */
    struct dlb_tensor_desc d = {.struct_size = sizeof d};
    CHECK(a->tensor_desc(h, m, all, &d) == DLB_ERR_INPUT);
    CHECK(a->tensor_io(h, m, all, DLB_TENSOR_VALUE, var, 3, 0) ==
          DLB_ERR_INPUT);
    CHECK(a->tensor_io(h, m, nl, DLB_TENSOR_GRAD, var, 3, 0) == DLB_ERR_INPUT);
    CHECK(a->tensor_io(h, m, nl, DLB_TENSOR_VALUE, var, 2, 0) ==
          DLB_ERR_INPUT);
    d.struct_size = 0;
    CHECK(a->tensor_desc(h, m, 0, &d) == DLB_ERR_INPUT);
    /* A shorter (older) struct is filled only as far as it reaches. */
    struct {
        struct dlb_tensor_desc d;
        char beyond[16];
    } sh;
    memset(&sh, 0x77, sizeof sh);
    sh.d.struct_size = offsetof(struct dlb_tensor_desc, kind);
    CHECK(a->tensor_desc(h, m, nl, &sh.d) == DLB_OK);
    CHECK(!strcmp(sh.d.name, "bn1.running_mean"));
    CHECK(sh.d.struct_size == offsetof(struct dlb_tensor_desc, kind));
    CHECK(((unsigned char *)&sh.d)[offsetof(struct dlb_tensor_desc, kind)] ==
          0x77);
}

/* ---- ranges ---------------------------------------------------------- */

struct pass {
    double loss;
    float out[N * K];
    float *grad;     /* every learnable tensor's, concatenated */
};

static float *all_grads(const struct dlb_host *h, struct dlb_model *m,
                        size_t *total)
{
    const struct dlb_model_api *a = h->model_api;
    size_t n = 0, off = 0;
    for (unsigned j = 0; j < a->tensor_count(h, m); j++) {
        struct dlb_param_info pi;
        CHECK(a->tensor_info(h, m, j, &pi) == DLB_OK);
        n += pi.count;
    }
    float *g = malloc(n * sizeof *g);
    for (unsigned j = 0; g && j < a->tensor_count(h, m); j++) {
        struct dlb_param_info pi;
        CHECK(a->tensor_info(h, m, j, &pi) == DLB_OK);
        CHECK(a->tensor_io(h, m, j, DLB_TENSOR_GRAD, g + off, pi.count, 0) ==
              DLB_OK);
        off += pi.count;
    }
    *total = n;
    return g;
}

/* Nodes [0, nodes) cut at cuts[0 .. n_cuts): forward, then backward from
 * the last range to the first, each handing the gradient at its cut on. */
static void run_cut(const struct dlb_host *h, struct dlb_model *m,
                    struct dlb_model *pristine, const float *img,
                    const int32_t *labels, const unsigned *cuts,
                    unsigned n_cuts, float loss_scale, struct pass *p)
{
    const struct dlb_model_api *a = h->model_api;
    dlb_extra_copy_rng copy = (dlb_extra_copy_rng)a->extra(h,
                                                           "model.copy_rng");
    unsigned nodes = a->node_count(h, m), b[8];
    float *act[8] = {NULL}, *grad[8] = {NULL};
    size_t total;
    CHECK(copy && copy(h, m, pristine) == DLB_OK); /* the same dropout */
    b[0] = 0;
    for (unsigned k = 0; k < n_cuts; k++)
        b[k + 1] = cuts[k];
    b[n_cuts + 1] = nodes;
    for (unsigned r = 0; r <= n_cuts; r++) {
        size_t per = 0, per_in = 0;
        CHECK(a->act_count(h, m, b[r + 1], &per) == DLB_OK);
        CHECK(a->act_count(h, m, b[r], &per_in) == DLB_OK);
        act[r + 1] = malloc(N * per * sizeof(float));
        grad[r] = malloc(N * per_in * sizeof(float));
        CHECK(a->forward_range(h, m, b[r], b[r + 1], N,
                               r ? act[r] : img, labels,
                               r == n_cuts ? p->out : act[r + 1],
                               r == n_cuts ? &p->loss : NULL) == DLB_OK);
    }
    for (unsigned r = n_cuts + 1; r-- > 0;)
        CHECK(a->backward_range(h, m, b[r], b[r + 1], loss_scale,
                                r == n_cuts ? NULL : grad[r + 1],
                                r ? grad[r] : NULL) == DLB_OK);
    p->grad = all_grads(h, m, &total);
    for (unsigned r = 0; r <= n_cuts + 1; r++) {
        free(act[r]);
        free(grad[r]);
    }
}

static void test_ranges(const struct dlb_host *h, struct dlb_model *base,
                        const struct dlb_model_spec *sp)
{
    const struct dlb_model_api *a = h->model_api;
    static float img[N * PER];
    static int32_t labels[N];
    struct dlb_batch b;
    dlb_status s;
    struct dlb_model *m = open_on(h, base, "ref", NULL, &s);
    struct dlb_model *pristine = open_on(h, base, "ref", NULL, &s);
    CHECK(m && pristine);
    if (!m || !pristine)
        return;
    CHECK(a->node_count(h, m) == 10);
    make_batch(sp, 3, N, img, labels, &b);
    struct pass whole, two, three, logits, again, scaled;
    const unsigned at5[] = {5}, at3_8[] = {3, 8}, at9[] = {9};
    size_t total = 0;
    run_cut(h, m, pristine, img, labels, NULL, 0, 1.0f, &whole);
    run_cut(h, m, pristine, img, labels, at5, 1, 1.0f, &two);
    run_cut(h, m, pristine, img, labels, at3_8, 2, 1.0f, &three);
    /* The skeleton's cut: before the log-softmax, a range of one node. */
    run_cut(h, m, pristine, img, labels, at9, 1, 1.0f, &logits);
    run_cut(h, m, pristine, img, labels, at5, 1, 2.0f, &scaled);
    float *g1 = all_grads(h, m, &total);
    CHECK(whole.grad && two.grad && three.grad && scaled.grad && g1);
    CHECK(two.loss == whole.loss && three.loss == whole.loss);
    CHECK(!memcmp(two.out, whole.out, sizeof whole.out));
    CHECK(!memcmp(three.out, whole.out, sizeof whole.out));
    CHECK(!memcmp(two.grad, whole.grad, total * sizeof(float)));
    CHECK(!memcmp(three.grad, whole.grad, total * sizeof(float)));
    CHECK(logits.grad && logits.loss == whole.loss);
    CHECK(!memcmp(logits.out, whole.out, sizeof whole.out));
    CHECK(logits.grad &&
          !memcmp(logits.grad, whole.grad, total * sizeof(float)));
    size_t off = 0;
    for (size_t i = 0; i < total; i++)
        off += scaled.grad[i] != 2.0f * whole.grad[i];
    CHECK(off == 0); /* x2 is exact */
    /* The whole range is the training step's forward and backward. */
    dlb_extra_copy_rng copy = (dlb_extra_copy_rng)a->extra(h,
                                                           "model.copy_rng");
    double fb_loss = 0;
    CHECK(copy(h, m, pristine) == DLB_OK);
    CHECK(a->forward_backward(h, m, img, labels, N, 1.0f, &fb_loss, NULL,
                              NULL) == DLB_OK);
    free(g1);
    g1 = all_grads(h, m, &total);
    CHECK_NEAR(fb_loss, whole.loss, 1e-6);
    for (size_t i = 0; i < total; i++)
        CHECK_NEAR(g1[i], whole.grad[i], 1e-5);
    /* A new pass draws new dropout masks: another loss. */
    double l2 = 0;
    float out[N * K];
    CHECK(a->forward_range(h, m, 0, 10, N, img, labels, out, &l2) == DLB_OK);
    CHECK(a->forward_range(h, m, 0, 10, N, img, labels, NULL, &again.loss) ==
          DLB_OK);
    CHECK(l2 != whole.loss && again.loss != l2);
    /* Bad requests. */
    static float buf[N * 256]; /* the widest activation: 4x8x8 */
    CHECK(a->forward_range(h, m, 5, 5, N, buf, NULL, buf, NULL) ==
          DLB_ERR_INPUT);
    CHECK(a->forward_range(h, m, 0, 11, N, img, labels, NULL, NULL) ==
          DLB_ERR_INPUT);
    CHECK(a->forward_range(h, m, 0, 5, 0, img, NULL, buf, NULL) ==
          DLB_ERR_INPUT);
    CHECK(a->forward_range(h, m, 0, 5, N, NULL, NULL, buf, NULL) ==
          DLB_ERR_INPUT);
    CHECK(a->forward_range(h, m, 0, 5, N, img, NULL, NULL, NULL) ==
          DLB_ERR_INPUT);
    CHECK(a->forward_range(h, m, 5, 10, N, buf, NULL, NULL, NULL) ==
          DLB_ERR_INPUT);
    CHECK(a->backward_range(h, m, 2, 6, 1.0f, buf, buf) == DLB_ERR_INPUT);
    CHECK(a->forward_range(h, m, 0, 5, N, img, NULL, buf, NULL) == DLB_OK);
    CHECK(a->backward_range(h, m, 0, 5, 1.0f, NULL, NULL) == DLB_ERR_INPUT);
    CHECK(a->backward_range(h, m, 0, 5, 1.0f, buf, NULL) == DLB_OK);
    CHECK(a->backward_range(h, m, 0, 5, 1.0f, buf, NULL) == DLB_ERR_INPUT);
    CHECK(a->forward_range(h, NULL, 0, 5, N, img, NULL, buf, NULL) != DLB_OK);
    free(whole.grad);
    free(two.grad);
    free(three.grad);
    free(logits.grad);
    free(scaled.grad);
    free(g1);
    /* Released with ranges still waiting for their backward. */
    CHECK(a->forward_range(h, m, 0, 3, N, img, NULL, buf, NULL) == DLB_OK);
    a->release(h, m);
    a->release(h, pristine);
}

/* A cut that two tensors cross (residual.ini: sum reads b2 and r1). */
static void test_range_cut(const struct dlb_host *h, struct dlb_model *m)
{
    const struct dlb_model_api *a = h->model_api;
    struct dlb_layer_info li;
    static float buf[4096];
    unsigned sum = 0;
    for (unsigned i = 0; i < a->node_count(h, m); i++)
        if (a->node_info(h, m, i, &li) == DLB_OK && !strcmp(li.name, "sum"))
            sum = i;
    CHECK(sum > 0);
    CHECK(a->forward_range(h, m, 0, sum, 1, buf, NULL, buf, NULL) ==
          DLB_ERR_INPUT);
}

/* The loader: a plugin built against 2.0 or 2.1 (the same descriptor,
 * an older minor) loads; a 1.x one is refused naming both versions. */
static void test_loader(void)
{
    struct dlb_plugin d = {.abi_major = 2, .abi_minor = 0,
                           .struct_size = sizeof d, .name = "old",
                           .version = "1", .summary = "built against 2.0"};
    struct dlb_error err = {""};
    CHECK(DLB_PLUGIN_ABI_MAJOR == 2 && DLB_PLUGIN_ABI_MINOR == 2);
    CHECK(dlb_plugin_validate(&d, "old", "old.so", &err) == DLB_OK);
    d.abi_minor = 1;
    CHECK(dlb_plugin_validate(&d, "old", "old.so", &err) == DLB_OK);
    d.abi_major = 1;
    d.abi_minor = 7;
    CHECK(dlb_plugin_validate(&d, "old", "old.so", &err) == DLB_ERR_PLUGIN);
    CHECK(strstr(err.msg, "built for plugin ABI 1.7; this dlbench speaks "
                          "2.2") != NULL);
}

int main(void)
{
    test_loader();
    struct env e;
    const struct dlb_host *h = env_open(&e, "api21");
    const struct dlb_model_api *a = h->model_api;
    CHECK(DLB_MODEL_API_HAS(a, backward_range) && a->tensor_count_all &&
          a->tensor_desc && a->forward_range && a->backward_range);
    struct dlb_model_spec *sp = spec_load("tests/unit/models/tiny.ini");
    struct dlb_model *m = sp ? model_open(&e, sp) : NULL;
    CHECK(m != NULL);
    if (m) {
        test_open(h, m, sp);
        test_tensor_ids(h, m, sp);
        test_open_named(h);
    }
    model_close(m);
    dlb_model_spec_free(sp);
    struct dlb_model_spec *rs = spec_load("tests/unit/models/range.ini");
    struct dlb_model *rm = rs ? model_open(&e, rs) : NULL;
    CHECK(rm != NULL);
    if (rm)
        test_ranges(h, rm, rs);
    model_close(rm);
    dlb_model_spec_free(rs);
    struct dlb_model_spec *res = spec_load("tests/unit/models/residual.ini");
    struct dlb_model *resm = res ? model_open(&e, res) : NULL;
    CHECK(resm != NULL);
    if (resm)
        test_range_cut(h, resm);
    model_close(resm);
    dlb_model_spec_free(res);
    env_close(&e);
    return check_exit();
}
