/* The model interface plugins see (h->model_api, ABI 2.0), on the cpu
 * backend (ref without it) and tests/unit/models/tiny.ini:
 *   - every entry is set and the documented extras resolve by name, an
 *     unknown name to NULL;
 *   - node_info's tensor ids name the tensors tensor_info lists, and
 *     tensor_io by id reads the very bits the model holds under that name;
 *   - state_io over every node is the whole model's state, and a clone
 *     given it holds it bit for bit;
 *   - infer's logits are the log-probabilities before the log-softmax;
 *   - rewrite refuses mixed kinds and an int8 rewrite out of node order,
 *     and a mask zeroes exactly the masked weights;
 *   - prepare (2.2) keeps each model a plugin will open once, for the
 *     workload to take before its backend opens; refuses a missing name,
 *     and any call once the workload has taken them;
 *   - on tests/unit/models/residual.ini, node_info gives the graph: a
 *     chain node reads the one before, an add its named inputs in order,
 *     a node reading the network's input -1; a conv's groups are 1.
 * Expected: all hold. Bugs they guard against: an entry left unset, ids
 * off by one between nodes and tensors, a clone or slice reading another
 * range than it says. */
#include "check.h"
#include "plugin_fixture.h"

#include <dlbench/model_api.h>

#include "child/host_api.h"

static void test_entries(const struct dlb_host *h)
{
    const struct dlb_model_api *a = h->model_api;
    static const char *const extras[] = {
        "quant.observe", "quant.folded_weights", "prune.sparse_info",
        "prune.finetune", "distill.soft_target_step", "model.copy_rng",
        "world.join"};
    CHECK(a == dlb_host_model_api() && a->struct_size == sizeof *a);
    CHECK(a->find && a->open && a->release && a->node_count && a->node_info);
    CHECK(a->tensor_count && a->tensor_info && a->tensor_io && a->tensor_map);
    CHECK(a->tensor_unmap && a->state_count && a->state_io);
    CHECK(a->weights_version && a->infer && a->evaluate && a->dataset);
    CHECK(a->forward_backward && a->step && a->optimizer && a->synchronize);
    CHECK(a->act_count && a->slice && a->slice_close && a->slice_begin);
    CHECK(a->slice_forward && a->slice_backward && a->slice_step);
    CHECK(a->slice_memory && a->slice_input && a->slice_forward_view);
    CHECK(a->slice_backward_view && a->rewrite && a->extra);
    CHECK(a->tensor_count_all && a->forward_range && a->prepare);
    CHECK(DLB_MODEL_API_HAS(a, extra) && DLB_MODEL_API_HAS(a, prepare));
    for (size_t i = 0; i < sizeof extras / sizeof extras[0]; i++)
        CHECK(a->extra(h, extras[i]) != NULL);
    CHECK(a->extra(h, "quant.no_such_extra") == NULL);
    CHECK(a->extra(h, NULL) == NULL);
}

/* Every conv and linear node's weight and bias through their ids. */
static void test_tensors(const struct dlb_host *h, struct dlb_model *m)
{
    const struct dlb_model_api *a = h->model_api;
    unsigned n = a->node_count(h, m), seen = 0;
    CHECK(n == 9); /* the eight sections and the loss's logsoftmax */
    for (unsigned i = 0; i < n; i++) {
        struct dlb_layer_info li;
        struct dlb_param_info pi;
        struct dlb_error err = {""};
        CHECK(a->node_info(h, m, i, &li) == DLB_OK);
        if (!li.weight[0]) {
            CHECK(li.weight_id == -1 && li.bias_id == -1);
            continue;
        }
        CHECK(li.weight_id >= 0 && li.bias_id >= 0);
        CHECK(a->tensor_info(h, m, (unsigned)li.weight_id, &pi) == DLB_OK);
        CHECK(!strcmp(pi.name, li.weight) && pi.count == li.weight_count);
        CHECK(pi.layer == i);
        CHECK(a->tensor_info(h, m, (unsigned)li.bias_id, &pi) == DLB_OK);
        CHECK(!strcmp(pi.name, li.bias) && pi.count == li.bias_count);
        float *by_id = malloc(li.weight_count * sizeof *by_id);
        float *by_name = malloc(li.weight_count * sizeof *by_name);
        CHECK(by_id && by_name);
        CHECK(a->tensor_io(h, m, (unsigned)li.weight_id, DLB_TENSOR_VALUE,
                           by_id, li.weight_count, 0) == DLB_OK);
        CHECK(dlb_model_tensor_io(m, li.weight, by_name, li.weight_count, 0,
                                  &err) == DLB_OK);
        CHECK(!memcmp(by_id, by_name, li.weight_count * sizeof *by_id));
        free(by_id);
        free(by_name);
        seen++;
    }
    CHECK(seen == 4); /* conv1, bn1, fc1, fc2 */
}

/* The whole model's state, as a range of every node, into a clone. */
static void test_state_and_clone(const struct dlb_host *h, struct dlb_model *m)
{
    const struct dlb_model_api *a = h->model_api;
    unsigned n = a->node_count(h, m);
    size_t all = 0, range = 0, cn = 0;
    struct dlb_model *c = NULL;
    CHECK(a->state_count(h, m, 0, DLB_NODES_ALL, DLB_STATE_WEIGHTS |
                         DLB_STATE_STATS, &all) == DLB_OK);
    CHECK(a->state_count(h, m, 0, n, DLB_STATE_WEIGHTS | DLB_STATE_STATS,
                         &range) == DLB_OK);
    CHECK(all > 0 && all == range);
    float *s = malloc(all * sizeof *s), *t = malloc(all * sizeof *t);
    float *u = calloc(all, sizeof *u);
    CHECK(s && t && u);
    CHECK(a->state_io(h, m, 0, DLB_NODES_ALL, DLB_STATE_WEIGHTS |
                      DLB_STATE_STATS, s, all, 0) == DLB_OK);
    CHECK(a->state_io(h, m, 0, n, DLB_STATE_WEIGHTS | DLB_STATE_STATS, t,
                      range, 0) == DLB_OK);
    CHECK(!memcmp(s, t, all * sizeof *s));
    CHECK(dlb_model_clone(h, m, 1, -1, &c) == DLB_OK && c);
    CHECK(a->state_count(h, c, 0, DLB_NODES_ALL, DLB_STATE_WEIGHTS |
                         DLB_STATE_STATS, &cn) == DLB_OK && cn == all);
    CHECK(a->state_io(h, c, 0, DLB_NODES_ALL, DLB_STATE_WEIGHTS |
                      DLB_STATE_STATS, s, all, 1) == DLB_OK);
    CHECK(a->state_io(h, c, 0, DLB_NODES_ALL, DLB_STATE_WEIGHTS |
                      DLB_STATE_STATS, u, all, 0) == DLB_OK);
    CHECK(!memcmp(s, u, all * sizeof *s));
    a->release(h, c);
    a->release(h, NULL);
    free(s);
    free(t);
    free(u);
}

/* logprobs = logits - log(sum exp(logits)), per image. */
static void test_infer(const struct dlb_host *h, struct dlb_model *m,
                       const struct dlb_model_spec *sp)
{
    const struct dlb_model_api *a = h->model_api;
    enum { N = 4, PER = 2 * 8 * 8, K = 5 };
    static float img[N * PER], lp[N * K], lg[N * K];
    static int32_t labels[N];
    struct dlb_batch b;
    make_batch(sp, 0, N, img, labels, &b);
    CHECK(a->infer(h, m, img, N, DLB_OUT_LOGPROBS, lp) == DLB_OK);
    CHECK(a->infer(h, m, img, N, DLB_OUT_LOGITS, lg) == DLB_OK);
    for (int i = 0; i < N; i++) {
        double mx = lg[i * K], z = 0;
        for (int k = 1; k < K; k++)
            mx = lg[i * K + k] > mx ? lg[i * K + k] : mx;
        for (int k = 0; k < K; k++)
            z += exp(lg[i * K + k] - mx);
        for (int k = 0; k < K; k++)
            CHECK_NEAR(lp[i * K + k], lg[i * K + k] - mx - log(z), 1e-5);
    }
}

static void test_rewrite(const struct dlb_host *h, struct dlb_model *m)
{
    const struct dlb_model_api *a = h->model_api;
    struct dlb_layer_info li;
    unsigned fc1 = 5;
    CHECK(a->node_info(h, m, fc1, &li) == DLB_OK &&
          li.kind == DLB_LAYER_LINEAR);
    size_t n = li.weight_count;
    uint8_t *mask = malloc(n);
    float *before = malloc(n * sizeof *before);
    float *after = malloc(n * sizeof *after);
    struct dlb_rng r;
    CHECK(mask && before && after);
    dlb_rng_seed_stream(&r, SEED, 7);
    for (size_t k = 0; k < n; k++)
        mask[k] = dlb_rng_below(&r, 2) != 0;
    struct dlb_rewrite mixed[2] = {
        {.node = fc1, .kind = DLB_REWRITE_MASK, .u.mask = {mask, n}},
        {.node = fc1, .kind = DLB_REWRITE_SPARSE,
         .u.sparse = DLB_PRUNE_SPARSE_OFF}};
    CHECK(a->rewrite(h, m, mixed, 2, NULL) == DLB_ERR_INPUT);
    struct dlb_rewrite q = {.node = 1, .kind = DLB_REWRITE_INT8,
                            .u.quant = {.act_type = DLB_F32}};
    CHECK(a->rewrite(h, m, &q, 1, NULL) == DLB_ERR_INPUT); /* not node 0 */
    CHECK(a->tensor_io(h, m, (unsigned)li.weight_id, DLB_TENSOR_VALUE, before,
                       n, 0) == DLB_OK);
    CHECK(a->rewrite(h, m, mixed, 1, NULL) == DLB_OK);
    CHECK(a->tensor_io(h, m, (unsigned)li.weight_id, DLB_TENSOR_VALUE, after,
                       n, 0) == DLB_OK);
    size_t wrong = 0;
    for (size_t k = 0; k < n; k++)
        wrong += mask[k] ? memcmp(&after[k], &before[k], sizeof *after) != 0
                         : after[k] != 0.0f;
    CHECK(wrong == 0);
    free(mask);
    free(before);
    free(after);
}

/* The graph through node_info (residual.ini: sum = add(b2, r1), proj reads
 * the network's input, sum2 = add(r2, proj, r1)). */
static int node_named(const struct dlb_host *h, struct dlb_model *m,
                      const char *name)
{
    const struct dlb_model_api *a = h->model_api;
    struct dlb_layer_info li;
    for (unsigned i = 0; i < a->node_count(h, m); i++)
        if (a->node_info(h, m, i, &li) == DLB_OK && !strcmp(li.name, name))
            return (int)i;
    return -2;
}

static void test_graph(const struct dlb_host *h, struct dlb_model *m)
{
    const struct dlb_model_api *a = h->model_api;
    struct dlb_layer_info li;
    int sum = node_named(h, m, "sum"), sum2 = node_named(h, m, "sum2");
    int proj = node_named(h, m, "proj"), c2 = node_named(h, m, "c2");
    CHECK(sum >= 0 && sum2 >= 0 && proj >= 0 && c2 >= 0);
    CHECK(a->node_info(h, m, (unsigned)sum, &li) == DLB_OK);
    CHECK(li.n_inputs == 2 && li.inputs[0] == node_named(h, m, "b2") &&
          li.inputs[1] == node_named(h, m, "r1"));
    CHECK(a->node_info(h, m, (unsigned)sum2, &li) == DLB_OK);
    CHECK(li.n_inputs == 3 && li.inputs[0] == node_named(h, m, "r2") &&
          li.inputs[1] == proj && li.inputs[2] == node_named(h, m, "r1"));
    CHECK(a->node_info(h, m, (unsigned)proj, &li) == DLB_OK);
    CHECK(li.n_inputs == 1 && li.inputs[0] == -1 && li.groups == 1);
    CHECK(a->node_info(h, m, (unsigned)c2, &li) == DLB_OK);
    CHECK(li.n_inputs == 1 && li.inputs[0] == c2 - 1 && li.groups == 1);
}

/* The models plugins will open, said from init, for the workload. */
static void test_prepare(const struct dlb_host *h)
{
    const struct dlb_model_api *a = h->model_api;
    struct dlb_model_open how = {.struct_size = sizeof how,
                                 .name = "resnet20", .steps = 300};
    const struct dlb_host_prepared *p = NULL;
    CHECK(a->prepare(h, &how) == DLB_OK);
    CHECK(a->prepare(h, &how) == DLB_OK); /* the same once */
    how.steps = 0;
    CHECK(a->prepare(h, &how) == DLB_OK); /* other steps: other weights */
    how.name = "";
    CHECK(a->prepare(h, &how) == DLB_ERR_INPUT);
    how.name = NULL;
    CHECK(a->prepare(h, &how) == DLB_ERR_INPUT);
    how = (struct dlb_model_open){.struct_size = 8, .name = "lenet"};
    CHECK(a->prepare(h, &how) == DLB_ERR_INPUT); /* shorter than 2.0's */
    /* more than there is room for: a hint, the rest trained by open */
    for (int k = 0; k < DLB_HOST_MAX_PREPARED + 2; k++) {
        how = (struct dlb_model_open){.struct_size = sizeof how,
                                      .name = "lenet", .steps = 10 + k};
        CHECK(a->prepare(h, &how) == DLB_OK);
    }
    unsigned n = dlb_host_take_prepared(h, &p);
    CHECK(n == DLB_HOST_MAX_PREPARED && p != NULL);
    if (p && n >= 3) {
        CHECK(!strcmp(p[0].name, "resnet20") && p[0].steps == 300);
        CHECK(!strcmp(p[1].name, "resnet20") && p[1].steps == 0);
        CHECK(!strcmp(p[2].name, "lenet") && p[2].steps == 10);
    }
    /* taken: too late now */
    how = (struct dlb_model_open){.struct_size = sizeof how, .name = "vgg-small"};
    CHECK(a->prepare(h, &how) == DLB_ERR_UNSUPPORTED);
    CHECK(dlb_host_take_prepared(h, &p) == n);
}

int main(void)
{
    struct env e;
    const struct dlb_host *h = env_open(&e, "api");
    struct dlb_model_spec *sp = spec_load("tests/unit/models/tiny.ini");
    struct dlb_model *m = sp ? model_open(&e, sp) : NULL;
    test_entries(h);
    CHECK(m != NULL);
    if (m) {
        test_tensors(h, m);
        test_state_and_clone(h, m);
        test_infer(h, m, sp);
        test_rewrite(h, m);
    }
    model_close(m);
    dlb_model_spec_free(sp);
    struct dlb_model_spec *rs = spec_load("tests/unit/models/residual.ini");
    struct dlb_model *rm = rs ? model_open(&e, rs) : NULL;
    CHECK(rm != NULL);
    if (rm)
        test_graph(h, rm);
    model_close(rm);
    dlb_model_spec_free(rs);
    test_prepare(h);
    env_close(&e);
    return check_exit();
}
