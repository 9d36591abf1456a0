/* The mp plugin's threads engine on the core's slices (model_api.h),
 * with the cpu backend (ref without it):
 *   - after two steps the weights and running statistics of a pipeline
 *     are bit-identical to one worker that accumulates gradients over the
 *     same micro-batches, for 1, 2 and 3 stages, 1, 2, 3 and 4
 *     micro-batches and both schedules (GPipe, 1F1B), on LeNet (dropout);
 *     on a network with batch norm they are within fp32 rounding of it
 *     (the cpu backend's batch-norm sums depend on the layout a cut hands
 *     over), and bit-identical with one stage;
 *   - with one micro-batch they are the single worker's full-batch step
 *     bit for bit, and on LeNet (no batch norm) with several micro-batches
 *     they equal it within fp32 rounding (dropout masks included);
 *   - 1F1B keeps fewer micro-batches for backward than GPipe;
 *   - schedules run each micro-batch's forward before its backward and
 *     the backwards in order; cut points are checked by name and count;
 *   - the view variants of the slices (activations in the backend's
 *     memory, engine nccl's) train to the same bits as the host ones;
 *   - engine nccl's grouped transfers complete under blocking semantics
 *     for both schedules (one transfer per group would deadlock 1F1B). */
#include "check.h"
#include "plugin_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp.h"

#define BATCH 12
#define STEPS 2
#define PARTS (DLB_STATE_WEIGHTS | DLB_STATE_STATS)

enum how { FULL_BATCH, ACCUMULATE, PIPELINE };

struct run {
    float *state;
    size_t n;
    struct mp_figures fig;
};

/* STEPS steps from the seed, then the weights and running statistics. */
static struct run train(const char *file, enum how how, int S, int M,
                        enum mp_schedule sched)
{
    struct run out = {NULL, 0, {0}};
    struct env e;
    const struct dlb_host *h = env_open(&e, "mp");
    const struct dlb_model_api *api = h->model_api;
    struct dlb_model_spec *sp = spec_load(file);
    struct dlb_model *m = sp ? model_open(&e, sp) : NULL;
    size_t per = sp ? (size_t)sp->in_c * sp->in_h * sp->in_w : 0;
    float *img = malloc(BATCH * per * sizeof *img);
    int32_t labels[BATCH];
    struct dlb_batch b;
    struct dlb_stage *st = NULL;
    void *eng = NULL;
    struct mp_settings s = {MP_THREADS, S, 1, "", M, sched, 1};
    dlb_status rc = m && img ? DLB_OK : DLB_ERR_NOMEM;
    unsigned nl = m ? h->model_api->node_count(h, m) : 0;
    struct dlb_stage_spec whole = {0, nl, (unsigned)M, 1.0f};
    if (rc == DLB_OK && how == ACCUMULATE)
        rc = api->slice(h, m, &whole, &st);
    if (rc == DLB_OK && how == PIPELINE)
        rc = mp_engine_threads.init(h, &s, &eng);
    for (int k = 0; rc == DLB_OK && k < STEPS; k++) {
        make_batch(sp, (uint64_t)k, BATCH, img, labels, &b);
        uint32_t lo[8];
        switch (how) {
        case FULL_BATCH:
            rc = api->forward_backward(h, m, img, labels, BATCH, 1.0f, NULL,
                                       NULL, NULL);
            if (rc == DLB_OK)
                rc = api->step(h, m);
            break;
        case ACCUMULATE: /* one worker, the micro-batches one by one */
            rc = api->slice_begin(h, st, BATCH, lo);
            for (int q = 0; rc == DLB_OK && q < M; q++)
                rc = api->slice_forward(h, st, (unsigned)q, img + lo[q] * per,
                                        labels + lo[q], NULL, NULL);
            for (int q = 0; rc == DLB_OK && q < M; q++)
                rc = api->slice_backward(h, st, (unsigned)q, NULL, NULL);
            if (rc == DLB_OK)
                rc = api->slice_step(h, st);
            break;
        case PIPELINE:
            rc = mp_engine_threads.step(eng, m, &b);
            break;
        }
    }
    CHECK(rc == DLB_OK);
    if (rc == DLB_OK) {
        if (eng)
            CHECK(mp_engine_threads.figures(eng, &out.fig) == DLB_OK);
        api->state_count(h, m, 0, DLB_NODES_ALL, PARTS, &out.n);
        out.state = malloc(out.n * sizeof *out.state);
        if (out.state)
            api->state_io(h, m, 0, DLB_NODES_ALL, PARTS, out.state, out.n, 0);
    }
    if (eng)
        mp_engine_threads.fini(eng);
    api->slice_close(h, st);
    model_close(m);
    dlb_model_spec_free(sp);
    free(img);
    env_close(&e);
    return out;
}

static double max_diff(const struct run *a, const struct run *b)
{
    double worst = 0;
    for (size_t j = 0; j < a->n && j < b->n; j++) {
        double d = fabs((double)a->state[j] - (double)b->state[j]);
        worst = d > worst ? d : worst;
    }
    return worst;
}

static int same(const struct run *a, const struct run *b)
{
    return a->state && b->state && a->n == b->n && a->n > 0 &&
           memcmp(a->state, b->state, a->n * sizeof *a->state) == 0;
}

static void test_equal_weights(const char *file, int no_batchnorm)
{
    struct run full = train(file, FULL_BATCH, 1, 1, MP_GPIPE);
    CHECK(full.state != NULL);
    for (int M = 1; M <= 4; M++) {
        struct run acc = train(file, ACCUMULATE, 1, M, MP_GPIPE);
        CHECK(acc.state != NULL);
        if (M == 1) /* no accumulation: the baseline step itself */
            CHECK(same(&acc, &full));
        if (no_batchnorm) {
            double d = max_diff(&acc, &full);
            fprintf(stderr, "%s: %d micro-batches vs the full batch: max "
                    "|diff| %.3g\n", file, M, d);
            CHECK(d <= 2e-6);
        }
        for (int S = 1; S <= 3; S++)
            for (int sc = 0; sc < 2; sc++) {
                struct run p = train(file, PIPELINE, S, M,
                                     (enum mp_schedule)sc);
                /* Without batch norm: bit for bit. With it, a cut hands
                 * the activations over in the plain layout, where the cpu
                 * backend's batch-norm sums may round otherwise than on
                 * oneDNN's blocked one: fp32 rounding. */
                int eq = no_batchnorm || S == 1
                             ? same(&p, &acc)
                             : p.state && p.n == acc.n && max_diff(&p, &acc) <= 1e-6;
                if (!eq)
                    fprintf(stderr, "%s: %d stages, %d micro-batches, %s: "
                            "differs from one worker's accumulation by %.3g\n",
                            file, S, M, sc ? "1f1b" : "gpipe",
                            max_diff(&p, &acc));
                CHECK(eq);
                CHECK(p.fig.steps == STEPS && p.fig.stages == S);
                free(p.state);
            }
        free(acc.state);
    }
    free(full.state);
}

/* Each micro-batch's forward before its backward, each once, backwards
 * in order; 1F1B keeps at most S - s in flight. */
static void test_schedules(void)
{
    struct mp_op ops[64];
    for (int S = 1; S <= 4; S++)
        for (int M = 1; M <= 8; M++)
            for (int sc = 0; sc < 2; sc++)
                for (int s = 0; s < S; s++) {
                    int fwd[8] = {0}, next_b = 0, flight = 0, most = 0;
                    mp_schedule_ops((enum mp_schedule)sc, s, S, M, ops);
                    for (int i = 0; i < 2 * M; i++) {
                        unsigned k = ops[i].k;
                        CHECK(k < (unsigned)M);
                        if (!ops[i].backward) {
                            CHECK(!fwd[k]);
                            fwd[k] = 1;
                            flight++;
                        } else {
                            CHECK(fwd[k] && k == (unsigned)next_b);
                            next_b++;
                            flight--;
                        }
                        most = flight > most ? flight : most;
                    }
                    CHECK(next_b == M);
                    CHECK(most == (sc == MP_1F1B ? (S - s < M ? S - s : M) : M));
                }
}

/* The view variants of the slices (what engine nccl runs on device
 * memory), on this backend's host views: S stages on replicas of one
 * model, micro-batch k's activations copied from stage r's forward_view
 * into stage r + 1's input_view, and its gradients from backward_view's
 * din back into input_view; after STEPS steps the stages' layers, handed
 * back into the model, are compared with one worker's accumulation. */
#define VIEW_MAX_S 4
#define VIEW_MAX_M 4

static dlb_status view_copy(const struct dlb_host *h, struct dlb_stage *to,
                            unsigned k, enum dlb_stage_input which,
                            const struct dlb_act_view *from)
{
    struct dlb_act_view in, again;
    dlb_status rc = h->model_api->slice_input(h, to, k, which, &in);
    if (rc != DLB_OK)
        return rc;
    /* Asking again gives the same buffer. */
    rc = h->model_api->slice_input(h, to, k, which, &again);
    CHECK(rc == DLB_OK && again.data == in.data);
    CHECK(in.count == from->count && !in.device && !from->device);
    if (in.count != from->count)
        return DLB_ERR_INTERNAL;
    memcpy(in.data, from->data, in.count * sizeof *in.data);
    return rc;
}

static dlb_status view_step(const struct dlb_host *h, struct dlb_stage **st,
                            int S, int M, const float *img, size_t per,
                            const int32_t *labels)
{
    const struct dlb_model_api *api = h->model_api;
    struct dlb_act_view out[VIEW_MAX_S][VIEW_MAX_M], din[VIEW_MAX_S];
    uint32_t lo[VIEW_MAX_M + 1];
    dlb_status rc = DLB_OK;
    for (int r = 0; rc == DLB_OK && r < S; r++)
        rc = api->slice_begin(h, st[r], BATCH, lo);
    for (int k = 0; rc == DLB_OK && k < M; k++)
        for (int r = 0; rc == DLB_OK && r < S; r++) {
            if (r > 0)
                rc = view_copy(h, st[r], (unsigned)k, DLB_STAGE_ACT,
                               &out[r - 1][k]);
            if (rc == DLB_OK)
                rc = api->slice_forward_view(h, st[r], (unsigned)k,
                                             r == 0 ? img + lo[k] * per : NULL,
                                             r == S - 1 ? labels + lo[k] : NULL,
                                             r < S - 1 ? &out[r][k] : NULL,
                                             NULL);
        }
    for (int k = 0; rc == DLB_OK && k < M; k++)
        for (int r = S - 1; rc == DLB_OK && r >= 0; r--) {
            if (r < S - 1)
                rc = view_copy(h, st[r], (unsigned)k, DLB_STAGE_GRAD,
                               &din[r + 1]);
            if (rc == DLB_OK)
                rc = api->slice_backward_view(h, st[r], (unsigned)k,
                                              r > 0 ? &din[r] : NULL);
        }
    for (int r = 0; rc == DLB_OK && r < S; r++)
        rc = api->slice_step(h, st[r]);
    return rc;
}

static struct run train_views(const char *file, int S, int M)
{
    struct run out = {NULL, 0, {0}};
    struct env e;
    const struct dlb_host *h = env_open(&e, "mp");
    const struct dlb_model_api *api = h->model_api;
    struct dlb_model_spec *sp = spec_load(file);
    struct dlb_model *m = sp ? model_open(&e, sp) : NULL;
    struct dlb_model *rep[VIEW_MAX_S] = {NULL};
    struct dlb_stage *st[VIEW_MAX_S] = {NULL};
    size_t per = sp ? (size_t)sp->in_c * sp->in_h * sp->in_w : 0, n = 0;
    float *img = malloc(BATCH * per * sizeof *img), *state = NULL;
    int32_t labels[BATCH];
    struct dlb_batch b;
    struct mp_settings set = {MP_THREADS, S, 1, "", M, MP_GPIPE, 1};
    struct mp_cut cut;
    dlb_status rc = m && img ? DLB_OK : DLB_ERR_NOMEM;
    CHECK(DLB_MODEL_API_HAS(api, slice_backward_view));
    if (rc == DLB_OK)
        rc = mp_plan_model(h, m, &set, &cut);
    if (rc == DLB_OK) {
        api->state_count(h, m, 0, DLB_NODES_ALL, DLB_STATE_ALL, &n);
        state = malloc(n * sizeof *state);
        rc = state ? api->state_io(h, m, 0, DLB_NODES_ALL, DLB_STATE_ALL,
                                   state, n, 0)
                   : DLB_ERR_NOMEM;
    }
    for (int r = 0; rc == DLB_OK && r < S; r++) {
        struct dlb_stage_spec spec = {cut.first[r], cut.first[r + 1],
                                      (unsigned)M, 1.0f};
        if ((rc = dlb_model_clone(h, m, 1, -1, &rep[r])) == DLB_OK &&
            (rc = api->state_io(h, rep[r], 0, DLB_NODES_ALL, DLB_STATE_ALL,
                                state, n, 1)) == DLB_OK &&
            (rc = ((dlb_extra_copy_rng)api->extra(h, "model.copy_rng"))(
                 h, rep[r], m)) == DLB_OK)
            rc = api->slice(h, rep[r], &spec, &st[r]);
    }
    for (int k = 0; rc == DLB_OK && k < STEPS; k++) {
        make_batch(sp, (uint64_t)k, BATCH, img, labels, &b);
        rc = view_step(h, st, S, M, img, per, labels);
    }
    /* Each stage's layers back into the model, as the engines do. */
    for (int r = 0; rc == DLB_OK && r < S; r++) {
        size_t c = 0;
        api->state_count(h, m, cut.first[r], cut.first[r + 1], PARTS, &c);
        float *flat = malloc((c ? c : 1) * sizeof *flat);
        rc = flat ? api->state_io(h, rep[r], cut.first[r], cut.first[r + 1],
                                  PARTS, flat, c, 0)
                  : DLB_ERR_NOMEM;
        if (rc == DLB_OK)
            rc = api->state_io(h, m, cut.first[r], cut.first[r + 1], PARTS,
                               flat, c, 1);
        free(flat);
    }
    CHECK(rc == DLB_OK);
    if (rc == DLB_OK) {
        api->state_count(h, m, 0, DLB_NODES_ALL, PARTS, &out.n);
        out.state = malloc(out.n * sizeof *out.state);
        if (out.state)
            api->state_io(h, m, 0, DLB_NODES_ALL, PARTS, out.state, out.n, 0);
    }
    for (int r = 0; r < S; r++) {
        api->slice_close(h, st[r]);
        api->release(h, rep[r]);
    }
    free(state);
    model_close(m);
    dlb_model_spec_free(sp);
    free(img);
    env_close(&e);
    return out;
}

static void test_views(void)
{
    const char *file = "suites/models/lenet.ini";
    for (int M = 1; M <= 3; M++) {
        struct run acc = train(file, ACCUMULATE, 1, M, MP_GPIPE);
        for (int S = 1; S <= 3; S++) {
            struct run v = train_views(file, S, M);
            if (!same(&v, &acc))
                fprintf(stderr, "views: %d stages, %d micro-batches: differs "
                        "from one worker's accumulation by %.3g\n", S, M,
                        max_diff(&v, &acc));
            CHECK(same(&v, &acc));
            free(v.state);
        }
        free(acc.state);
    }
}

/* Engine nccl's groups under blocking transfers (a group completes once
 * every peer has posted the matching transfer, and a stage waits for its
 * group before its next operation): every stage gets through every
 * group, for both schedules, 1 to 8 stages and 1 to 12 micro-batches;
 * the messages between two stages go in micro-batch order, as NCCL's
 * in-order matching needs. Grouped one transfer at a time instead, 1F1B
 * deadlocks, which is why they are paired. */
#define P2P_MAX_S 8
#define P2P_MAX_M 12

/* The index in g of the transfer matching `want` of stage self, or -1. */
static int p2p_match(const struct mp_p2p_group *g, int self,
                     const struct mp_p2p *want)
{
    for (int i = 0; i < g->n; i++)
        if (g->p[i].peer == self && g->p[i].send != want->send &&
            g->p[i].grad == want->grad && g->p[i].k == want->k)
            return i;
    return -1;
}

/* 1 when every stage finishes; split: one transfer per group. */
static int p2p_runs(enum mp_schedule sched, int S, int M, int split)
{
    static struct mp_p2p_group g[P2P_MAX_S][4 * P2P_MAX_M + 2];
    struct mp_op ops[2 * P2P_MAX_M];
    int n[P2P_MAX_S], at[P2P_MAX_S];
    /* done[s][i][j]: transfer j of group i of stage s has its match. */
    static unsigned char done[P2P_MAX_S][4 * P2P_MAX_M + 2][2];
    memset(done, 0, sizeof done);
    for (int s = 0; s < S; s++) {
        struct mp_p2p_group tmp[2 * P2P_MAX_M + 1];
        mp_schedule_ops(sched, s, S, M, ops);
        mp_p2p_plan(ops, s, S, M, tmp);
        n[s] = 0;
        at[s] = 0;
        for (int i = 0; i <= 2 * M; i++) {
            if (!split) {
                g[s][n[s]++] = tmp[i];
                continue;
            }
            for (int j = 0; j < tmp[i].n; j++)
                g[s][n[s]++] = (struct mp_p2p_group){{tmp[i].p[j]}, 1};
        }
    }
    for (int moved = 1; moved;) {
        moved = 0;
        for (int s = 0; s < S; s++) {
            if (at[s] == n[s])
                continue;
            const struct mp_p2p_group *cur = &g[s][at[s]];
            int all = 1;
            for (int j = 0; j < cur->n; j++) {
                int q = cur->p[j].peer;
                int i = at[q] < n[q] ? p2p_match(&g[q][at[q]], s, &cur->p[j])
                                     : -1;
                /* Both posted: the pair completes, on both sides. */
                if (i >= 0) {
                    done[s][at[s]][j] = 1;
                    done[q][at[q]][i] = 1;
                }
                all &= done[s][at[s]][j];
            }
            if (all) {
                at[s]++;
                moved = 1;
            }
        }
    }
    for (int s = 0; s < S; s++)
        if (at[s] != n[s])
            return 0;
    return 1;
}

static void test_p2p(void)
{
    struct mp_op ops[2 * P2P_MAX_M];
    struct mp_p2p_group g[2 * P2P_MAX_M + 1];
    for (int S = 1; S <= P2P_MAX_S; S++)
        for (int M = 1; M <= P2P_MAX_M; M++)
            for (int sc = 0; sc < 2; sc++) {
                CHECK(p2p_runs((enum mp_schedule)sc, S, M, 0));
                for (int s = 0; s < S; s++) {
                    int next[2][2] = {{0, 0}, {0, 0}}; /* [send][grad] */
                    mp_schedule_ops((enum mp_schedule)sc, s, S, M, ops);
                    mp_p2p_plan(ops, s, S, M, g);
                    for (int i = 0; i <= 2 * M; i++) {
                        CHECK(g[i].n <= 2);
                        for (int j = 0; j < g[i].n; j++) {
                            const struct mp_p2p *p = &g[i].p[j];
                            CHECK(p->peer == (p->send ^ p->grad ? s + 1 : s - 1));
                            CHECK((int)p->k == next[p->send][p->grad]++);
                        }
                    }
                    /* Every micro-batch crosses each of the stage's cuts
                     * once each way. */
                    CHECK(next[0][0] == (s > 0 ? M : 0));
                    CHECK(next[1][0] == (s < S - 1 ? M : 0));
                    CHECK(next[0][1] == (s < S - 1 ? M : 0));
                    CHECK(next[1][1] == (s > 0 ? M : 0));
                }
            }
    /* The reason for the pairing: one transfer at a time deadlocks 1F1B
     * with two stages and two micro-batches. */
    CHECK(!p2p_runs(MP_1F1B, 2, 2, 1));
    CHECK(p2p_runs(MP_GPIPE, 4, 4, 1));
}

static void test_cuts(void)
{
    static const char *const names[] = {"conv1", "pool1", "relu1", "fc1",
                                        "logsoftmax"};
    struct mp_settings s = {MP_THREADS, 2, 1, "fc1", 4, MP_GPIPE, 1};
    struct mp_cut cut;
    double cost[5] = {10, 1, 1, 10, 1};
    char why[512];
    int param = -1;
    CHECK(mp_cut_check(&s, 5, names, NULL, &param, why, sizeof why) == DLB_OK);
    CHECK(mp_cut_plan(&s, 5, names, NULL, cost, &cut, why, sizeof why) == DLB_OK);
    CHECK(cut.n == 2 && cut.first[0] == 0 && cut.first[1] == 3 &&
          cut.first[2] == 5);
    snprintf(s.cuts, sizeof s.cuts, "fc9");
    CHECK(mp_cut_check(&s, 5, names, NULL, &param, why,
                       sizeof why) == DLB_ERR_INPUT);
    CHECK(param == MP_CUTS && strstr(why, "'fc9' names no layer"));
    snprintf(s.cuts, sizeof s.cuts, "fc1,pool1");
    s.stages = 3;
    CHECK(mp_cut_check(&s, 5, names, NULL, &param, why,
                       sizeof why) == DLB_ERR_INPUT);
    CHECK(param == MP_CUTS && strstr(why, "does not come after"));
    snprintf(s.cuts, sizeof s.cuts, "pool1");
    CHECK(mp_cut_check(&s, 5, names, NULL, &param, why,
                       sizeof why) == DLB_ERR_INPUT);
    CHECK(param == MP_CUTS && strstr(why, "makes 2 stages"));
    s.cuts[0] = '\0';
    s.stages = 6;
    CHECK(mp_cut_check(&s, 5, names, NULL, &param, why,
                       sizeof why) == DLB_ERR_INPUT);
    CHECK(param == MP_STAGES && strstr(why, "6 stages for a network of 5"));
    /* Without cuts, the costliest stage is as cheap as it can be. */
    s.stages = 2;
    CHECK(mp_cut_plan(&s, 5, names, NULL, cost, &cut, why, sizeof why) == DLB_OK);
    double a = 0, b = 0;
    for (unsigned i = 0; i < 5; i++)
        *(i < cut.first[1] ? &a : &b) += cost[i];
    CHECK(cut.n == 2 && (a > b ? a : b) == 12.0);
}

/* A residual network: a cut goes only between blocks, where one tensor
 * crosses; inside a block the shortcut would be a second. */
static void test_cuts_residual(void)
{
    /* stem, then a block (c1 b1 add reading stem's relu), then the head. */
    static const char *const names[] = {"conv", "relu", "c1", "b1", "add",
                                        "relu2", "fc", "logsoftmax"};
    /* add (4) reads relu (1): a cut before b1 or add would hand the
     * shortcut on beside the block's own tensor; before c1 relu's output
     * is the one tensor that crosses, read twice. */
    static const uint32_t reader[] = {8, 8, 8, 4, 4, 8, 8, 8};
    double cost[8] = {5, 1, 10, 1, 1, 1, 10, 1};
    struct mp_settings s = {MP_THREADS, 2, 1, "b1", 4, MP_GPIPE, 1};
    struct mp_cut cut;
    char why[512];
    int param = -1;
    CHECK(mp_cut_check(&s, 8, names, reader, &param, why,
                       sizeof why) == DLB_ERR_INPUT);
    fprintf(stderr, "refused: %s\n", why);
    CHECK(param == MP_CUTS && strstr(why, "'b1' would hand two tensors on") &&
          strstr(why, "layer 'add' reads") &&
          strstr(why, "before one of: relu, c1, relu2, fc, logsoftmax"));
    /* A chain's reading of the same names allows it. */
    CHECK(mp_cut_check(&s, 8, names, NULL, &param, why, sizeof why) == DLB_OK);
    snprintf(s.cuts, sizeof s.cuts, "relu2");
    CHECK(mp_cut_plan(&s, 8, names, reader, cost, &cut, why,
                      sizeof why) == DLB_OK);
    CHECK(cut.n == 2 && cut.first[1] == 5);
    /* Balanced: the best split of a chain would begin a stage at b1
     * (costs 16 | 14), inside the block; the best that hands one tensor
     * on begins it at relu2 (18 | 12). */
    s.cuts[0] = '\0';
    CHECK(mp_cut_plan(&s, 8, names, NULL, cost, &cut, why,
                      sizeof why) == DLB_OK);
    CHECK(cut.n == 2 && cut.first[1] == 3);
    CHECK(mp_cut_plan(&s, 8, names, reader, cost, &cut, why,
                      sizeof why) == DLB_OK);
    CHECK(cut.n == 2 && cut.first[1] == 5 && cut.first[2] == 8);
    /* Five places to cut: six stages fit, seven do not, said why. */
    s.stages = 6;
    CHECK(mp_cut_plan(&s, 8, names, reader, cost, &cut, why,
                      sizeof why) == DLB_OK);
    CHECK(cut.n == 6 && cut.first[1] == 1 && cut.first[2] == 2 &&
          cut.first[3] == 5);
    s.stages = 7;
    CHECK(mp_cut_check(&s, 8, names, reader, &param, why,
                       sizeof why) == DLB_ERR_INPUT);
    CHECK(param == MP_STAGES && strstr(why, "7 stages need 6 cuts") &&
          strstr(why, "this network has 5"));
}

int main(void)
{
    test_schedules();
    test_p2p();
    test_views();
    test_cuts();
    test_cuts_residual();
    test_equal_weights("suites/models/lenet.ini", 1);
    test_equal_weights("tests/unit/models/tiny.ini", 0);
    /* Adds, a tensor read three times, a shortcut from the input: the
     * planner cuts after the last add, and stages hold whole blocks. */
    test_equal_weights("tests/unit/models/residual.ini", 0);

    /* Memory: with more micro-batches than stages, 1F1B keeps fewer. */
    struct run g = train("suites/models/lenet.ini", PIPELINE, 2, 4, MP_GPIPE);
    struct run o = train("suites/models/lenet.ini", PIPELINE, 2, 4, MP_1F1B);
    fprintf(stderr, "stage 0 keeps %llu bytes under gpipe, %llu under 1f1b\n",
            (unsigned long long)g.fig.saved_peak[0],
            (unsigned long long)o.fig.saved_peak[0]);
    CHECK(g.fig.saved_peak[0] > o.fig.saved_peak[0] && o.fig.saved_peak[0] > 0);
    CHECK(g.fig.sent_bytes > 0 && g.fig.sent_bytes == o.fig.sent_bytes);
    CHECK(same(&g, &o));
    free(g.state);
    free(o.state);
    return check_exit();
}
