/* The dp plugin's threads engine and gradient buckets, on the core's
 * replica services (model_api.h) with the cpu backend (ref without it):
 *   - buckets cover every learnable tensor once, in backward's order;
 *   - the reduced gradient of a two-replica step equals the sum of the two
 *     shards' gradients computed one after the other on one worker, and,
 *     for a network without batch norm, the whole batch's gradient, within
 *     fp32 rounding;
 *   - after steps the replicas' weights, statistics and momentum are
 *     bit-identical to the master's;
 *   - overlap on and off give bit-identical weights (the sum's order does
 *     not depend on timing). */
#include "check.h"
#include "plugin_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"

#define BATCH 10

static struct dp_settings settings(int replicas, int overlap, size_t bucket)
{
    return (struct dp_settings){DP_THREADS, replicas, 1, bucket, overlap, 1,
                                1};
}

static float *grads(const struct dlb_host *h, struct dlb_model *m, size_t *n)
{
    const struct dlb_model_api *api = h->model_api;
    unsigned np = api->tensor_count(h, m);
    size_t total = 0, off = 0;
    struct dlb_param_info pi;
    for (unsigned p = 0; p < np; p++)
        if (api->tensor_info(h, m, p, &pi) == DLB_OK)
            total += pi.count;
    float *g = calloc(total ? total : 1, sizeof *g);
    for (unsigned p = 0; g && p < np; p++) {
        api->tensor_info(h, m, p, &pi);
        api->tensor_io(h, m, p, DLB_TENSOR_GRAD, g + off, pi.count, 0);
        off += pi.count;
    }
    *n = total;
    return g;
}

static void test_buckets(const struct dlb_host *h, struct dlb_model *m)
{
    struct dp_plan plan;
    size_t sizes[] = {4, 256, 4096, 1 << 30};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        CHECK(dp_plan_build(h, m, sizes[k], &plan) == DLB_OK);
        size_t covered = 0;
        unsigned expect_hi = plan.n_params - 1;
        for (unsigned b = 0; b < plan.n; b++) {
            /* backward's order: each bucket ends where the previous began */
            CHECK(plan.b[b].hi == expect_hi);
            CHECK(plan.b[b].lo <= plan.b[b].hi);
            CHECK(b == 0 || plan.b[b].ready_layer <= plan.b[b - 1].ready_layer);
            CHECK(plan.b[b].offset == covered);
            covered += plan.b[b].count;
            expect_hi = plan.b[b].lo - 1;
        }
        CHECK(plan.b[plan.n - 1].lo == 0);
        CHECK(covered == plan.total);
        if (sizes[k] == 4)
            CHECK(plan.n == plan.n_params);
        if (sizes[k] == 1 << 30)
            CHECK(plan.n == 1);
        unsigned next = 0;
        CHECK(dp_plan_ready(&plan, 0, &next) == plan.n && next == plan.n);
        dp_plan_free(&plan);
    }
}

/* One two-replica step against the shards done one after the other on a
 * second model, and (without batch norm) the whole batch at once. */
static void test_reduced_gradient(const char *model_file, int whole_batch)
{
    struct env e;
    const struct dlb_host *h = env_open(&e, "dp");
    const struct dlb_model_api *api = h->model_api;
    struct dlb_model_spec *sp = spec_load(model_file);
    struct dlb_model *m = sp ? model_open(&e, sp) : NULL;
    struct dlb_model *ref = sp ? model_open(&e, sp) : NULL;
    struct dp_settings s = settings(2, 1, 64);
    size_t per = sp ? (size_t)sp->in_c * sp->in_h * sp->in_w : 0;
    float *img = malloc(BATCH * per * sizeof *img);
    int32_t labels[BATCH];
    struct dlb_batch b;
    void *eng = NULL;
    CHECK(m && ref && img);
    if (!m || !ref || !img)
        goto out;
    if (!whole_batch)
        test_buckets(h, m);
    make_batch(sp, 0, BATCH, img, labels, &b);
    CHECK(dp_engine_threads.init(h, &s, &eng) == DLB_OK);
    CHECK(dp_engine_threads.step(eng, m, &b) == DLB_OK);
    size_t n = 0, n0 = 0;
    float *reduced = grads(h, m, &n);

    /* The same shards on one worker, one after the other. */
    uint32_t lo, hi;
    dp_shard(BATCH, 0, 2, &lo, &hi);
    CHECK(api->forward_backward(h, ref, img, labels, hi - lo,
                                dp_shard_scale(&s, hi - lo,
                                               BATCH), NULL, NULL,
                                               NULL) == DLB_OK);
    float *g0 = grads(h, ref, &n0);
    dp_shard(BATCH, 1, 2, &lo, &hi);
    CHECK(api->forward_backward(h, ref, img + lo * per, labels + lo, hi - lo,
                                dp_shard_scale(&s, hi - lo,
                                               BATCH), NULL, NULL,
                                               NULL) == DLB_OK);
    float *g1 = grads(h, ref, &n0);
    CHECK(n == n0 && n > 0);
    double worst = 0, scale = 0;
    for (size_t j = 0; j < n && j < n0; j++) {
        float sum = g0[j] + g1[j];
        double d = fabs((double)reduced[j] - (double)sum);
        worst = d > worst ? d : worst;
        scale = fabs(sum) > scale ? fabs(sum) : scale;
    }
    fprintf(stderr, "%s: reduced vs shards summed on one worker: max |diff| "
            "%.3g (max |g| %.3g)\n", model_file, worst, scale);
    CHECK(worst <= 1e-6 * (scale > 1 ? scale : 1));

    if (whole_batch) {
        CHECK(api->forward_backward(h, ref, img, labels, BATCH, 1.0f, NULL,
                                    NULL, NULL) == DLB_OK);
        float *gw = grads(h, ref, &n0);
        worst = 0;
        for (size_t j = 0; gw && j < n && j < n0; j++) {
            double d = fabs((double)reduced[j] - (double)gw[j]);
            worst = d > worst ? d : worst;
        }
        fprintf(stderr, "%s: reduced vs the whole batch on one worker: max "
                "|diff| %.3g\n", model_file, worst);
        CHECK(worst <= 1e-5 * (scale > 1 ? scale : 1));
        free(gw);
    }
    free(reduced);
    free(g0);
    free(g1);
out:
    if (eng)
        dp_engine_threads.fini(eng);
    model_close(m);
    model_close(ref);
    dlb_model_spec_free(sp);
    free(img);
    env_close(&e);
}

/* Steps with `replicas`, then the master's whole state (NULL on failure). */
static float *train(int replicas, int overlap, int steps, size_t *count,
                    struct dp_figures *fig)
{
    struct env e;
    const struct dlb_host *h = env_open(&e, "dp");
    struct dlb_model_spec *sp = spec_load("tests/unit/models/tiny.ini");
    struct dlb_model *m = sp ? model_open(&e, sp) : NULL;
    struct dp_settings s = settings(replicas, overlap, 256);
    size_t per = sp ? (size_t)sp->in_c * sp->in_h * sp->in_w : 0;
    float *img = malloc(BATCH * per * sizeof *img), *state = NULL;
    int32_t labels[BATCH];
    struct dlb_batch b;
    void *eng = NULL;
    dlb_status st = m && img ? dp_engine_threads.init(h, &s,
                                                      &eng) : DLB_ERR_NOMEM;
    for (int k = 0; st == DLB_OK && k < steps; k++) {
        make_batch(sp, (uint64_t)k, BATCH, img, labels, &b);
        st = dp_engine_threads.step(eng, m, &b);
    }
    CHECK(st == DLB_OK);
    if (st == DLB_OK) {
        memset(fig, 0, sizeof *fig);
        CHECK(dp_engine_threads.figures(eng, m, fig) == DLB_OK);
        h->model_api->state_count(h, m, 0, DLB_NODES_ALL, DLB_STATE_ALL,
                                  count);
        state = malloc(*count * sizeof *state);
        if (state)
            h->model_api->state_io(h, m, 0, DLB_NODES_ALL, DLB_STATE_ALL,
                                   state, *count, 0);
    }
    if (eng)
        dp_engine_threads.fini(eng);
    model_close(m);
    dlb_model_spec_free(sp);
    free(img);
    env_close(&e);
    return state;
}

int main(void)
{
    struct dp_figures fa, fb, fc;
    size_t na = 0, nb = 0, nc = 0;
    test_reduced_gradient("tests/unit/models/tiny.ini", 0);
    test_reduced_gradient("tests/unit/models/dp-plain.ini", 1);

    float *a = train(3, 1, 4, &na, &fa);
    float *b = train(3, 0, 4, &nb, &fb);
    CHECK(a && b && na == nb);
    /* Replicas hold the master's state bit for bit after every step. */
    CHECK(fa.weights_checked && fa.weights_identical && fa.weights_max_diff == 0);
    CHECK(fb.weights_checked && fb.weights_identical && fb.weights_max_diff == 0);
    CHECK(fa.steps == 4 && fa.workers == 3);
    /* Overlap changes when buckets are summed, not what they sum to. */
    CHECK(a && b && na == nb && memcmp(a, b, na * sizeof *a) == 0);
    /* Steps changed the weights (the check above is not vacuous). */
    float *c = train(3, 1, 1, &nc, &fc);
    CHECK(a && c && na == nc && memcmp(a, c, na * sizeof *a) != 0);
    free(a);
    free(b);
    free(c);
    return check_exit();
}
