/* Filter pruning on residual and depthwise networks (ResNet-20 and
 * MobileNetV2 at 32x32), on ref and, where oneDNN is built in, on cpu:
 * - the plugin's groups (plugins/prune/prune_groups.c) over the model's
 *   own layer descriptions: every conv feeding an add (and the stem and
 *   projection shortcuts) lands in one group per stage, depthwise convs in
 *   none, the classifier refused;
 * - one keep list per group (a fixed pattern, about half) removed by the
 *   core: the smaller network's shapes are consistent over the graph (each
 *   layer's input is its producer's output, a depthwise conv keeps
 *   groups = filters = channels, counts agree with the formulas), and its
 *   log-probabilities equal those of the original in which every consumer
 *   of a removed channel has that input zeroed, within 1e-5 (ref) or 1e-4
 *   (cpu: oneDNN sums in another order for other shapes), while the
 *   zeroing itself moves them by more than 1e-3. The channel
 *   bookkeeping of the zeroing is written here, apart from the core's;
 * - the pruned network trains a step;
 * - unstructured masks on every conv and linear layer (depthwise ones
 *   too): the zeros counted are the mask's, and the masked network
 *   computes what the zeros written directly compute, bit for bit (ref);
 * - a removal that an add cannot take (one member of a group alone) and
 *   the selection of a depthwise conv are refused with the layer named,
 *   the model unchanged. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "model/model.h"
#include "model/model_prune.h"
#include "prune_groups.h"
#include "util/rng.h"
#include "model_fixture.h"

#define N 2
#define PIX (32 * 32)

static float img[N * PIX];
static int32_t lab[N];

/* A shipped network (model_fixture.h's loader), and a model of it. */
static struct dlb_model_spec *load(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "suites/models/%s.ini", name);
    return fx_load_spec(rel);
}

static struct dlb_model *make(struct dlb_backend *be,
                              const struct dlb_model_spec *sp)
{
    return fx_make(sp, be, DLB_F32, 7);
}

static float *get(struct dlb_model *m, const char *name, size_t *count)
{
    struct dlb_error err = {""};
    size_t n = 0;
    CHECK(dlb_model_tensor_count(m, name, &n, &err) == DLB_OK);
    float *v = malloc(n * sizeof *v + 1);
    CHECK(dlb_model_tensor_io(m, name, v, n, 0, &err) == DLB_OK);
    *count = n;
    return v;
}

static void put(struct dlb_model *m, const char *name, float *v, size_t n)
{
    struct dlb_error err = {""};
    CHECK(dlb_model_tensor_io(m, name, v, n, 1, &err) == DLB_OK);
}

/* Batch norms far from identity (a removed channel is not zero after
 * them) and weights of every tensor scaled so that the deep networks keep
 * a signal; the same values in every model made from `seed`. */
static void shake(struct dlb_model *m)
{
    struct dlb_rng r;
    dlb_rng_seed(&r, 99);
    for (size_t i = 0; i < dlb_model_n_tensors(m); i++) {
        const char *name = dlb_model_tensor_at(m, i)->name;
        if (!strstr(name, "_bn."))
            continue;
        size_t n;
        float *v = get(m, name, &n);
        int var = strstr(name, "running_var") != NULL;
        int gamma = strstr(name, ".weight") != NULL;
        for (size_t k = 0; k < n; k++)
            v[k] = var ? 0.5f + 1.5f * (float)dlb_rng_double(&r)
                 : gamma ? 0.5f + (float)dlb_rng_double(&r)
                         : 0.5f * (float)dlb_rng_normal(&r);
        put(m, name, v, n);
        free(v);
    }
}

static void copy_all(struct dlb_model *from, struct dlb_model *to)
{
    for (size_t i = 0; i < dlb_model_n_tensors(from); i++) {
        const char *name = dlb_model_tensor_at(from, i)->name;
        size_t n;
        float *v = get(from, name, &n);
        put(to, name, v, n);
        free(v);
    }
}

static double max_diff(struct dlb_model *a, struct dlb_model *b)
{
    struct dlb_error err = {""};
    float pa[N * 10], pb[N * 10];
    CHECK(dlb_model_infer(a, img, N, pa, &err) == DLB_OK);
    CHECK(dlb_model_infer(b, img, N, pb, &err) == DLB_OK);
    double worst = 0;
    for (int k = 0; k < N * 10; k++)
        worst = fmax(worst, fabs((double)pa[k] - pb[k]));
    return worst;
}

/* Which units of group g stay: a fixed pattern, about half. */
static int kept(int g, uint32_t u)
{
    return (u * 7u + (unsigned)g) % 2u == 0;
}

static int depthwise(const struct dlb_layer_spec *L)
{
    return L->kind == DLB_LAYER_CONV && L->groups > 1 &&
           L->groups == L->in_c && L->filters == L->in_c;
}

/* Zero, in `m`, every input of a (not depthwise) conv or linear layer
 * that comes from a removed channel: the channels of an activation are
 * followed here from the group that made them, through per-channel
 * layers, depthwise convs and adds (whose inputs share a group). */
static void zero_removed(struct dlb_model *m, const struct dlb_model_spec *sp,
                         const struct prune_groups *g, const int *pruned)
{
    int *src = malloc((sp->n_layers + 1) * sizeof *src);
    uint32_t *hw = malloc((sp->n_layers + 1) * sizeof *hw);
    src[0] = -1;
    hw[0] = 1;
    for (unsigned i = 0; i < sp->n_layers; i++) {
        const struct dlb_layer_spec *L = &sp->layers[i];
        unsigned a = (unsigned)(L->inputs[0] + 1);
        src[i + 1] = src[a];
        hw[i + 1] = L->kind == DLB_LAYER_FLATTEN ? L->in_h * L->in_w : hw[a];
        if (L->kind == DLB_LAYER_ADD)
            for (unsigned k = 1; k < L->n_inputs; k++)
                CHECK(src[L->inputs[k] + 1] == src[a]);
        if ((L->kind != DLB_LAYER_CONV && L->kind != DLB_LAYER_LINEAR) ||
            depthwise(L))
            continue;
        src[i + 1] = pruned[g->group[i]] ? g->group[i] : -1;
        hw[i + 1] = 1;
        if (src[a] < 0)
            continue;
        char name[96];
        size_t n;
        snprintf(name, sizeof name, "%s.weight", L->name);
        float *w = get(m, name, &n);
        size_t per = n / L->out_c, inner = per / L->in_c;
        for (uint32_t o = 0; o < L->out_c; o++)
            for (uint32_t c = 0; c < L->in_c; c++)
                if (!kept(src[a], c / hw[a]))
                    memset(w + o * per + c * inner, 0, inner * sizeof *w);
        put(m, name, w, n);
        free(w);
    }
    free(src);
    free(hw);
}

/* Every layer's input is its producer's output; counts agree. */
static void check_shapes(struct dlb_model *m)
{
    const struct dlb_model_spec *sp = dlb_model_spec_of(m);
    uint64_t params = 0;
    double flops = 0;
    for (unsigned i = 0; i < sp->n_layers; i++) {
        const struct dlb_layer_spec *L = &sp->layers[i];
        struct dlb_layer_info li;
        for (unsigned k = 0; k < L->n_inputs; k++) {
            int p = L->inputs[k];
            uint32_t c = p < 0 ? sp->in_c : sp->layers[p].out_c;
            uint32_t h = p < 0 ? sp->in_h : sp->layers[p].out_h;
            if (L->kind != DLB_LAYER_CONCAT)
                CHECK(L->in_c == c && L->in_h == h);
        }
        CHECK(dlb_model_layer_info(m, i, &li) == DLB_OK);
        CHECK(li.in_c == L->in_c && li.out_c == L->out_c);
        if (L->kind == DLB_LAYER_CONV) {
            CHECK(L->out_c == L->filters);
            CHECK(L->in_c % L->groups == 0);
            CHECK(li.weight_count == (size_t)L->filters *
                                         (L->in_c / L->groups) * L->size *
                                         L->size);
        }
        if (L->kind == DLB_LAYER_LINEAR)
            CHECK(li.weight_count == (size_t)L->out * L->in_c);
        if (L->kind == DLB_LAYER_CONV || L->kind == DLB_LAYER_LINEAR ||
            L->kind == DLB_LAYER_BATCHNORM)
            CHECK(L->params == li.weight_count + li.bias_count);
        params += L->params;
        flops += L->flops_fwd;
    }
    CHECK(params == sp->params);
    CHECK(flops == sp->flops_fwd);
}

static void groups_of(struct dlb_model *m, struct prune_groups *g)
{
    const struct dlb_model_spec *sp = dlb_model_spec_of(m);
    struct dlb_layer_info *li = calloc(sp->n_layers, sizeof *li);
    for (unsigned i = 0; i < sp->n_layers; i++)
        CHECK(dlb_model_layer_info(m, i, &li[i]) == DLB_OK);
    CHECK(prune_groups_find(li, (unsigned)sp->n_layers, g));
    free(li);
}

static size_t layer_of(const struct dlb_model_spec *sp, const char *name)
{
    for (size_t i = 0; i < sp->n_layers; i++)
        if (!strcmp(sp->layers[i].name, name))
            return i;
    CHECK(0);
    return 0;
}

/* ResNet-20: conv1 and the three stage-1 conv2s are one group; stage 2's
 * projection and conv2s another; a block's conv1 alone; fc refused. */
static void check_resnet_groups(const struct dlb_model_spec *sp,
                                const struct prune_groups *g)
{
    int stem = g->group[layer_of(sp, "conv1")];
    CHECK(stem == (int)layer_of(sp, "conv1"));
    CHECK(g->group[layer_of(sp, "layer1_0_conv2")] == stem);
    CHECK(g->group[layer_of(sp, "layer1_2_conv2")] == stem);
    int s2 = g->group[layer_of(sp, "layer2_0_conv2")];
    CHECK(s2 != stem && g->group[layer_of(sp, "layer2_0_down")] == s2);
    CHECK(g->group[layer_of(sp, "layer2_2_conv2")] == s2);
    CHECK(g->group[layer_of(sp, "layer1_1_conv1")] ==
          (int)layer_of(sp, "layer1_1_conv1"));
    CHECK(g->why[stem][0] == 0 && g->why[s2][0] == 0);
    CHECK(strstr(g->why[layer_of(sp, "fc")], "class scores") != NULL);
}

static void test_net(struct dlb_backend *be, const char *model, double tol)
{
    struct dlb_model_spec *sp = load(model);
    struct dlb_error err = {""};
    struct dlb_model *m = make(be, sp), *want = make(be, sp),
                     *orig = make(be, sp);
    struct prune_groups g;
    size_t nl = sp->n_layers;
    struct dlb_prune_keep *keep = calloc(nl, sizeof *keep);
    uint32_t **lists = calloc(nl, sizeof *lists);
    int *pruned = calloc(nl, sizeof *pruned);
    unsigned n = 0, n_groups = 0, n_dw = 0;
    shake(m);
    copy_all(m, want);
    copy_all(m, orig);
    groups_of(m, &g);
    if (!strcmp(model, "resnet20"))
        check_resnet_groups(sp, &g);
    for (unsigned i = 0; i < nl; i++) {
        const struct dlb_layer_spec *L = &sp->layers[i];
        n_dw += depthwise(L);
        if (depthwise(L))
            CHECK(g.group[i] == -1);
        if (g.group[i] < 0 || g.why[i][0])
            continue;
        pruned[g.group[i]] = 1;
        n_groups += g.group[i] == (int)i;
        lists[n] = malloc(L->out_c * sizeof *lists[n]);
        keep[n] = (struct dlb_prune_keep){i, lists[n], 0};
        for (uint32_t u = 0; u < L->out_c; u++)
            if (kept(g.group[i], u))
                lists[n][keep[n].n_keep++] = u;
        n++;
    }
    zero_removed(want, sp, &g, pruned);
    dlb_status s = dlb_model_prune_remove(m, keep, n, &err);
    if (s != DLB_OK)
        fprintf(stderr, "%s\n", err.msg);
    CHECK(s == DLB_OK);
    check_shapes(m);
    const struct dlb_model_spec *ns = dlb_model_spec_of(m);
    CHECK(ns->params < sp->params && ns->flops_fwd < sp->flops_fwd);
    for (unsigned k = 0; k < n; k++)
        CHECK(ns->layers[keep[k].layer].out_c == keep[k].n_keep);
    for (unsigned i = 0; i < nl; i++)
        if (depthwise(&sp->layers[i]))
            CHECK(depthwise(&ns->layers[i]) &&
                  ns->layers[i].out_c < sp->layers[i].out_c);
    double d = max_diff(m, want), d_orig = max_diff(orig, want);
    fprintf(stderr, "%s %s: %u layers in %u groups (%u depthwise follow), "
            "%llu -> %llu parameters; pruned vs consumers' inputs zeroed "
            "%.3g (the zeroing itself moves them by %.3g)\n",
            dlb_backend_name(be), model, n, n_groups, n_dw,
            (unsigned long long)sp->params, (unsigned long long)ns->params,
            d, d_orig);
    CHECK(d <= tol);
    CHECK(d_orig > 1e-3); /* the comparison sees a removal's effect */
    CHECK(n_groups >= 3);
    double loss = 0;
    s = dlb_model_forward_backward(m, img, lab, N, 1.0f, &loss, &err);
    if (s == DLB_OK)
        s = dlb_model_sgd_step(m, &err);
    CHECK(s == DLB_OK && isfinite(loss));
    for (unsigned k = 0; k < n; k++)
        free(lists[k]);
    free(lists);
    free(keep);
    free(pruned);
    prune_groups_free(&g);
    dlb_model_destroy(m);
    dlb_model_destroy(want);
    dlb_model_destroy(orig);
    dlb_model_spec_free(sp);
}

/* Unstructured: a mask on every conv (depthwise and projections too) and
 * linear layer; the zeros counted on the device are the mask's, and the
 * masked network computes what the same zeros written directly compute,
 * bit for bit. */
static void test_masks(struct dlb_backend *be, const char *model)
{
    struct dlb_model_spec *sp = load(model);
    struct dlb_error err = {""};
    struct dlb_model *m = make(be, sp), *direct = make(be, sp);
    struct dlb_rng r;
    unsigned layers = 0;
    shake(m);
    copy_all(m, direct);
    dlb_rng_seed(&r, 5);
    for (unsigned i = 0; i < sp->n_layers; i++) {
        const struct dlb_layer_spec *L = &sp->layers[i];
        struct dlb_layer_info li;
        if (L->kind != DLB_LAYER_CONV && L->kind != DLB_LAYER_LINEAR)
            continue;
        CHECK(dlb_model_layer_info(m, i, &li) == DLB_OK);
        size_t n = li.weight_count, set = 0, z = 0, c = 0;
        uint8_t *mk = malloc(n);
        float *w = get(direct, li.weight, &n);
        for (size_t k = 0; k < n; k++) {
            mk[k] = dlb_rng_double(&r) >= 0.5;
            set += !mk[k];
            w[k] = mk[k] ? w[k] : 0.0f;
        }
        put(direct, li.weight, w, n);
        CHECK(dlb_model_prune_set_mask(m, i, mk, n, &err) == DLB_OK);
        CHECK(dlb_model_prune_count_zeros(m, i, &z, &c, &err) == DLB_OK);
        CHECK(z == set && c == n);
        layers++;
        free(mk);
        free(w);
    }
    double d = max_diff(m, direct);
    fprintf(stderr, "%s %s: masks on %u layers; masked vs zeros written "
            "%.3g\n", dlb_backend_name(be), model, layers, d);
    CHECK(d == 0.0);
    dlb_model_destroy(m);
    dlb_model_destroy(direct);
    dlb_model_spec_free(sp);
}

/* One member of a group alone, and a depthwise conv: refused. */
static void test_refused(struct dlb_backend *be)
{
    struct dlb_model_spec *sp = load("resnet20");
    struct dlb_error err = {""};
    struct dlb_model *m = make(be, sp);
    const uint32_t two[2] = {0, 1};
    struct dlb_prune_keep k = {(unsigned)layer_of(sp, "layer1_1_conv2"), two,
                               2};
    CHECK(dlb_model_prune_remove(m, &k, 1, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "layer1_1_add") && strstr(err.msg, "same units"));
    CHECK(dlb_model_spec_of(m) == sp);
    dlb_model_destroy(m);
    dlb_model_spec_free(sp);
    sp = load("mobilenet-v2-32");
    m = make(be, sp);
    k = (struct dlb_prune_keep){(unsigned)layer_of(sp, "features2_dw"), two,
                                2};
    CHECK(dlb_model_prune_remove(m, &k, 1, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "features2_dw") && strstr(err.msg, "depthwise"));
    CHECK(dlb_model_spec_of(m) == sp);
    dlb_model_destroy(m);
    dlb_model_spec_free(sp);
}

static void run_on(const char *name)
{
    struct dlb_backend *be = NULL;
    char why[256];
    if (dlb_backend_open(name, NULL, &be, why, sizeof why) != DLB_OK) {
        fprintf(stderr, "backend %s: %s (skipped)\n", name, why);
        return;
    }
    int ref = !strcmp(name, "ref");
    test_net(be, "resnet20", ref ? 1e-5 : 1e-4);
    test_net(be, "mobilenet-v2-32", ref ? 1e-5 : 1e-4);
    if (ref) {
        test_masks(be, "resnet20");
        test_masks(be, "mobilenet-v2-32");
        test_refused(be);
    }
    dlb_backend_close(be);
}

int main(void)
{
    struct dlb_rng r;
    dlb_rng_seed(&r, 1);
    for (int k = 0; k < N * PIX; k++)
        img[k] = (float)dlb_rng_normal(&r);
    for (int k = 0; k < N; k++)
        lab[k] = k % 10;
    run_on("ref");
    run_on("cpu");
    return check_exit();
}
