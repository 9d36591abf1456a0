/* Pruning inside the model (core/model/model_prune*.c), on ref and, where
 * oneDNN is built in, on cpu:
 * - structured removal on LeNet (conv -> pool -> relu -> conv, conv ->
 *   flatten -> linear in blocks of 4x4, linear -> linear) and vgg-small
 *   (conv -> batchnorm -> relu -> conv, five times; the last conv feeds
 *   the classifier through a global pool): the smaller network's shapes
 *   are consistent (each layer's input is the previous output; parameter
 *   and FLOP counts agree with the tensors and the formulas), and its
 *   log-probabilities equal those of the original in which the next
 *   layer's inputs from the removed units are zeroed, within 1e-5 (ref,
 *   exact but for the rounding of fewer zero terms) or 1e-4 (cpu: oneDNN
 *   sums in another order for other shapes). With batch norm between,
 *   zeroing the removed filters alone is NOT the same network (batch norm
 *   turns a zero channel into beta - gamma*mean/sigma): checked to differ;
 * - a pruned network trains (forward, backward, SGD);
 * - masks: the weights are zero exactly where the mask is, unchanged
 *   elsewhere; zeros counted on the device equal the mask's; the masked
 *   model computes what the same weights written directly compute (bit
 *   for bit); after SGD steps the masked weights are still zero;
 * - sparse execution: the CSR path (on) against the dense one (off)
 *   within 1e-5 on log-probabilities, rebuilt after the weights change;
 *   auto times both and records its choice;
 * - fine-tuning runs the trainer, keeps the masks and restores the lr;
 * - bad requests are refused with the reason. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "data/dataset.h"
#include "model/model.h"
#include "model/model_prune.h"
#include "util/rng.h"

#define N 4

static const char *srcdir;
static float img[N * 784];
static int32_t lab[N];

static struct dlb_model_spec *load(const char *name)
{
    char path[1024];
    struct dlb_error err = {""};
    struct dlb_model_spec *sp = NULL;
    snprintf(path, sizeof path, "%s/suites/models/%s.ini", srcdir, name);
    if (dlb_model_file_load(path, &sp, &err) != DLB_OK)
        fprintf(stderr, "%s\n", err.msg);
    CHECK(sp != NULL);
    return sp;
}

static struct dlb_model *make(struct dlb_backend *be,
                              const struct dlb_model_spec *sp)
{
    struct dlb_model *m = NULL;
    struct dlb_error err = {""};
    if (dlb_model_create(sp, be, DLB_F32, 7, &m, &err) != DLB_OK)
        fprintf(stderr, "%s\n", err.msg);
    CHECK(m != NULL);
    return m;
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

/* Batch norm with statistics and affine parameters far from identity, so
 * that a removed channel's output is not zero after it. */
static void shake_bn(struct dlb_model *m)
{
    struct dlb_rng r;
    dlb_rng_seed(&r, 99);
    for (size_t i = 0; i < dlb_model_n_tensors(m); i++) {
        const char *name = dlb_model_tensor_at(m, i)->name;
        if (strncmp(name, "bn", 2) != 0)
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

/* Which units of layer i stay: a fixed pattern, about half. */
static int kept(unsigned i, uint32_t u)
{
    return (u * 7u + i) % 2u == 0;
}

/* Zero, in `m`, what the removal takes: the inputs of each consumer from
 * removed units (through a flatten: blocks of h*w features); with
 * `filters_only` instead the removed filters themselves. The channel
 * bookkeeping is written here independently of the core's. */
static void zero_removed(struct dlb_model *m, const struct dlb_model_spec *sp,
                         const unsigned char *sel, int filters_only)
{
    int from = -1;
    uint32_t hw = 1;
    for (unsigned i = 0; i < sp->n_layers; i++) {
        const struct dlb_layer_spec *L = &sp->layers[i];
        char name[96];
        if (L->kind == DLB_LAYER_FLATTEN)
            hw = L->in_h * L->in_w;
        if (L->kind != DLB_LAYER_CONV && L->kind != DLB_LAYER_LINEAR)
            continue;
        size_t n;
        snprintf(name, sizeof name, "%s.weight", L->name);
        float *w = get(m, name, &n);
        size_t per = n / L->out_c;
        if (filters_only && sel[i]) {
            for (uint32_t u = 0; u < L->out_c; u++)
                if (!kept(i, u))
                    memset(w + u * per, 0, per * sizeof *w);
        } else if (!filters_only && from >= 0) {
            for (uint32_t o = 0; o < L->out_c; o++)
                for (uint32_t c = 0; c < L->in_c; c++)
                    if (!kept((unsigned)from, c / hw))
                        for (size_t k = 0; k < per / L->in_c; k++)
                            w[o * per + c * (per / L->in_c) + k] = 0.0f;
        }
        put(m, name, w, n);
        free(w);
        from = sel[i] ? (int)i : -1;
        hw = 1;
    }
}

/* Every layer takes the previous one's output; counts agree. */
static void check_shapes(struct dlb_model *m)
{
    const struct dlb_model_spec *sp = dlb_model_spec_of(m);
    uint32_t c = sp->in_c, h = sp->in_h, w = sp->in_w;
    uint64_t params = 0;
    double flops = 0;
    for (unsigned i = 0; i < sp->n_layers; i++) {
        const struct dlb_layer_spec *L = &sp->layers[i];
        struct dlb_layer_info li;
        CHECK(L->in_c == c && L->in_h == h && L->in_w == w);
        CHECK(dlb_model_layer_info(m, i, &li) == DLB_OK);
        CHECK(li.in_c == L->in_c && li.out_c == L->out_c);
        if (L->kind == DLB_LAYER_CONV) {
            CHECK(L->out_c == L->filters);
            CHECK(li.weight_count == (size_t)L->filters * L->in_c * L->size *
                                         L->size);
            CHECK(L->flops_fwd == 2.0 * L->out_c * L->out_h * L->out_w *
                                      L->in_c * L->size * L->size);
        }
        if (L->kind == DLB_LAYER_LINEAR) {
            CHECK(L->out_c == L->out);
            CHECK(li.weight_count == (size_t)L->out * L->in_c);
            CHECK(L->flops_fwd == 2.0 * L->out * L->in_c);
        }
        if (L->kind == DLB_LAYER_CONV || L->kind == DLB_LAYER_LINEAR ||
            L->kind == DLB_LAYER_BATCHNORM)
            CHECK(L->params == li.weight_count + li.bias_count);
        c = L->out_c, h = L->out_h, w = L->out_w;
        params += L->params;
        flops += L->flops_fwd;
    }
    CHECK(params == sp->params);
    CHECK(flops == sp->flops_fwd);
    CHECK(c == sp->classes);
}

static void train_steps(struct dlb_model *m, int steps)
{
    struct dlb_error err = {""};
    for (int k = 0; k < steps; k++) {
        double loss = 0;
        dlb_status s = dlb_model_forward_backward(m, img, lab, N, 1.0f, &loss,
                                                  &err);
        if (s == DLB_OK)
            s = dlb_model_sgd_step(m, &err);
        if (s != DLB_OK)
            fprintf(stderr, "%s\n", err.msg);
        CHECK(s == DLB_OK);
        CHECK(isfinite(loss) && loss > 0);
    }
}

static void test_structured(struct dlb_backend *be, const char *model,
                            double tol)
{
    struct dlb_model_spec *sp = load(model);
    struct dlb_error err = {""};
    struct dlb_model *m = make(be, sp), *want = make(be, sp),
                     *filters = make(be, sp);
    unsigned char sel[64] = {0};
    struct dlb_prune_keep keep[16];
    uint32_t lists[16][256];
    unsigned n = 0;
    shake_bn(m);
    copy_all(m, want);
    copy_all(m, filters);
    for (unsigned i = 0; i < sp->n_layers; i++) {
        const struct dlb_layer_spec *L = &sp->layers[i];
        /* the last linear layer gives the class scores */
        if ((L->kind != DLB_LAYER_CONV && L->kind != DLB_LAYER_LINEAR) ||
            i + 2 == sp->n_layers)
            continue;
        keep[n] = (struct dlb_prune_keep){i, lists[n], 0};
        for (uint32_t u = 0; u < L->out_c; u++)
            if (kept(i, u))
                lists[n][keep[n].n_keep++] = u;
        sel[i] = 1;
        n++;
    }
    zero_removed(want, sp, sel, 0);
    zero_removed(filters, sp, sel, 1);
    dlb_status s = dlb_model_prune_remove(m, keep, n, &err);
    if (s != DLB_OK)
        fprintf(stderr, "%s\n", err.msg);
    CHECK(s == DLB_OK);
    check_shapes(m);
    CHECK(dlb_model_spec_of(m)->params < sp->params);
    CHECK(dlb_model_spec_of(m)->flops_fwd < sp->flops_fwd);
    for (unsigned k = 0; k < n; k++)
        CHECK(dlb_model_spec_of(m)->layers[keep[k].layer].out_c ==
              keep[k].n_keep);
    double d = max_diff(m, want), d_filters = max_diff(m, filters);
    fprintf(stderr, "%s %s: %zu -> %llu parameters; pruned vs next-layer "
            "inputs zeroed %.3g, vs filters zeroed %.3g\n",
            dlb_backend_name(be), model, (size_t)sp->params,
            (unsigned long long)dlb_model_spec_of(m)->params, d, d_filters);
    CHECK(d <= tol);
    if (!strcmp(model, "vgg-small"))
        CHECK(d_filters > 1e-3); /* batch norm: not the same network */
    train_steps(m, 2);
    dlb_model_destroy(m);
    dlb_model_destroy(want);
    dlb_model_destroy(filters);
    dlb_model_spec_free(sp);
}

static size_t layer_of(const struct dlb_model_spec *sp, const char *name)
{
    for (size_t i = 0; i < sp->n_layers; i++)
        if (!strcmp(sp->layers[i].name, name))
            return i;
    CHECK(0);
    return 0;
}

/* Random masks for conv2 (75% zeros) and fc1 (90%) of LeNet. */
static void masks(struct dlb_model *m, uint8_t **mk, size_t *cnt,
                  size_t *zeros)
{
    const struct dlb_model_spec *sp = dlb_model_spec_of(m);
    const char *names[2] = {"conv2", "fc1"};
    const double frac[2] = {0.75, 0.9};
    struct dlb_rng r;
    struct dlb_error err = {""};
    dlb_rng_seed(&r, 5);
    for (int t = 0; t < 2; t++) {
        struct dlb_layer_info li;
        unsigned i = (unsigned)layer_of(sp, names[t]);
        CHECK(dlb_model_layer_info(m, i, &li) == DLB_OK);
        cnt[t] = li.weight_count;
        mk[t] = malloc(cnt[t]);
        zeros[t] = 0;
        for (size_t k = 0; k < cnt[t]; k++) {
            mk[t][k] = dlb_rng_double(&r) >= frac[t];
            zeros[t] += !mk[t][k];
        }
        CHECK(dlb_model_prune_set_mask(m, i, mk[t], cnt[t], &err) == DLB_OK);
    }
}

static void test_masks(struct dlb_backend *be)
{
    struct dlb_model_spec *sp = load("lenet");
    struct dlb_error err = {""};
    struct dlb_model *m = make(be, sp), *direct = make(be, sp);
    uint8_t *mk[2];
    size_t cnt[2], zeros[2], n;
    const char *names[2] = {"conv2.weight", "fc1.weight"};
    float *orig[2];
    for (int t = 0; t < 2; t++)
        orig[t] = get(m, names[t], &n);
    masks(m, mk, cnt, zeros);
    for (int t = 0; t < 2; t++) {
        float *w = get(m, names[t], &n);
        int ok = 1;
        for (size_t k = 0; k < n; k++)
            ok &= mk[t][k] ? w[k] == orig[t][k] : w[k] == 0.0f;
        CHECK(ok);
        size_t z = 0, c = 0;
        unsigned i = (unsigned)layer_of(sp, t ? "fc1" : "conv2");
        CHECK(dlb_model_prune_count_zeros(m, i, &z, &c, &err) == DLB_OK);
        CHECK(z == zeros[t] && c == cnt[t]);
        put(direct, names[t], w, n);
        free(w);
    }
    CHECK(max_diff(m, direct) == 0.0);
    train_steps(m, 3);
    for (int t = 0; t < 2; t++) {
        float *w = get(m, names[t], &n);
        size_t still = 0, moved = 0;
        for (size_t k = 0; k < n; k++) {
            still += !mk[t][k] && w[k] == 0.0f;
            moved += mk[t][k] && w[k] != orig[t][k];
        }
        CHECK(still == zeros[t]);
        CHECK(moved > 0); /* it did train */
        free(w);
        free(orig[t]);
        free(mk[t]);
    }
    /* Removing units from a masked model is refused. */
    struct dlb_prune_keep k = {0, (const uint32_t[]){0, 1}, 2};
    CHECK(dlb_model_prune_remove(m, &k, 1, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "before masking") != NULL);
    dlb_model_destroy(m);
    dlb_model_destroy(direct);
    dlb_model_spec_free(sp);
}

static void test_sparse(struct dlb_backend *be)
{
    struct dlb_model_spec *sp = load("lenet");
    struct dlb_error err = {""};
    struct dlb_model *m = make(be, sp), *dense = make(be, sp);
    uint8_t *mk[2];
    size_t cnt[2], zeros[2], n;
    unsigned fc1 = (unsigned)layer_of(sp, "fc1");
    struct dlb_prune_sparse_info si;
    masks(m, mk, cnt, zeros);
    copy_all(m, dense);
    if (!dlb_backend_has_kind(be, DLB_OP_LINEAR_CSR)) {
        /* No sparse kernel: on is refused, auto runs dense. */
        CHECK(dlb_model_prune_set_sparse(m, fc1, DLB_PRUNE_SPARSE_ON, &err) ==
              DLB_ERR_UNSUPPORTED);
        CHECK(dlb_model_prune_set_sparse(m, fc1, DLB_PRUNE_SPARSE_AUTO,
                                         &err) == DLB_OK);
        CHECK(max_diff(m, dense) <= 1e-5);
        CHECK(dlb_model_prune_sparse_info(m, fc1, &si, &err) == DLB_OK);
        CHECK(si.sparse == 0);
        goto out;
    }
    CHECK(dlb_model_prune_set_sparse(m, fc1, DLB_PRUNE_SPARSE_ON, &err) ==
          DLB_OK);
    CHECK(max_diff(m, dense) <= 1e-5);
    CHECK(dlb_model_prune_sparse_info(m, fc1, &si, &err) == DLB_OK);
    CHECK(si.sparse == 1 && si.batch == N && si.calls == 1);
    CHECK(si.count == cnt[1]);
    CHECK(si.nnz == cnt[1] - zeros[1]);
    /* New weights: the CSR form follows them. */
    float *w = get(m, "fc1.weight", &n);
    for (size_t k = 0; k < n; k++)
        w[k] = w[k] * -2.0f;
    put(m, "fc1.weight", w, n);
    put(dense, "fc1.weight", w, n);
    free(w);
    CHECK(max_diff(m, dense) <= 1e-5);
    CHECK(dlb_model_prune_set_sparse(m, fc1, DLB_PRUNE_SPARSE_AUTO, &err) ==
          DLB_OK);
    CHECK(max_diff(m, dense) <= 1e-5);
    CHECK(dlb_model_prune_sparse_info(m, fc1, &si, &err) == DLB_OK);
    CHECK(si.mode == DLB_PRUNE_SPARSE_AUTO && si.batch == N);
    CHECK(si.dense_s > 0 && si.sparse_s > 0);
    CHECK(si.sparse == (si.sparse_s < si.dense_s));
    fprintf(stderr, "%s: lenet fc1 at 90%% zeros, batch %d: dense %.2f us, "
            "CSR %.2f us\n", dlb_backend_name(be), N, si.dense_s * 1e6,
            si.sparse_s * 1e6);
    /* The batch that ran most is reported, not the last one. */
    float one[10];
    CHECK(dlb_model_infer(m, img, 1, one, &err) == DLB_OK);
    CHECK(dlb_model_prune_sparse_info(m, fc1, &si, &err) == DLB_OK);
    CHECK(si.batch == N && si.calls == 1);
    CHECK(dlb_model_infer(m, img, 1, one, &err) == DLB_OK);
    CHECK(dlb_model_infer(m, img, 1, one, &err) == DLB_OK);
    CHECK(dlb_model_prune_sparse_info(m, fc1, &si, &err) == DLB_OK);
    CHECK(si.batch == 1 && si.calls == 3);
out:
    /* Only linear layers run sparse. */
    CHECK(dlb_model_prune_set_sparse(m, 0, DLB_PRUNE_SPARSE_ON, &err) ==
          DLB_ERR_INPUT);
    free(mk[0]);
    free(mk[1]);
    dlb_model_destroy(m);
    dlb_model_destroy(dense);
    dlb_model_spec_free(sp);
}

static void test_finetune(struct dlb_backend *be)
{
    struct dlb_model_spec *sp = load("lenet");
    struct dlb_error err = {""};
    struct dlb_model *m = make(be, sp);
    struct dlb_dataset ds;
    uint8_t *mk[2];
    size_t cnt[2], zeros[2], z = 0, c = 0;
    double loss = 0, secs = 0;
    CHECK(dlb_dataset_synthetic(256, 3, 1, &ds) == DLB_OK);
    masks(m, mk, cnt, zeros);
    dlb_model_set_sgd(m, 0.05f, 0.9f);
    struct dlb_batch_spec spec = {32, 1, 0, 1, 11};
    dlb_status s = dlb_model_finetune(m, &ds, &spec, 5, 0.01f, &loss, &secs,
                                      &err);
    if (s != DLB_OK)
        fprintf(stderr, "%s\n", err.msg);
    CHECK(s == DLB_OK);
    CHECK(isfinite(loss) && loss > 0 && secs > 0);
    CHECK(dlb_model_prune_count_zeros(m, (unsigned)layer_of(sp, "fc1"), &z, &c,
                                      &err) == DLB_OK);
    CHECK(z == zeros[1]);
    free(mk[0]);
    free(mk[1]);
    dlb_dataset_free(&ds);
    dlb_model_destroy(m);
    dlb_model_spec_free(sp);
}

static void test_refused(struct dlb_backend *be)
{
    struct dlb_model_spec *sp = load("lenet");
    struct dlb_error err = {""};
    struct dlb_model *m = make(be, sp);
    const uint32_t two[2] = {0, 1}, back[2] = {3, 1};
    unsigned fc2 = (unsigned)layer_of(sp, "fc2");
    struct dlb_prune_keep k = {fc2, two, 2};
    CHECK(dlb_model_prune_remove(m, &k, 1, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "class scores") != NULL);
    k = (struct dlb_prune_keep){0, back, 2};
    CHECK(dlb_model_prune_remove(m, &k, 1, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "ascending") != NULL);
    k = (struct dlb_prune_keep){0, two, 0};
    CHECK(dlb_model_prune_remove(m, &k, 1, &err) == DLB_ERR_INPUT);
    k = (struct dlb_prune_keep){(unsigned)layer_of(sp, "relu1"), two, 2};
    CHECK(dlb_model_prune_remove(m, &k, 1, &err) == DLB_ERR_INPUT);
    CHECK(dlb_model_prune_set_mask(m, 0, (const uint8_t *)"\1", 1, &err) ==
          DLB_ERR_INPUT);
    /* Keeping every unit (sparsity 0) is no removal at all. */
    const uint32_t all[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    k = (struct dlb_prune_keep){0, all, 10};
    CHECK(dlb_model_prune_remove(m, &k, 1, &err) == DLB_OK);
    /* Nothing was changed by the refusals, nor by that. */
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
    test_structured(be, "lenet", ref ? 1e-5 : 1e-4);
    test_structured(be, "vgg-small", ref ? 1e-5 : 1e-4);
    test_masks(be);
    test_sparse(be);
    test_finetune(be);
    test_refused(be);
    dlb_backend_close(be);
}

int main(void)
{
    struct dlb_rng r;
    srcdir = getenv("srcdir") ? getenv("srcdir") : ".";
    dlb_rng_seed(&r, 1);
    for (int k = 0; k < N * 784; k++)
        img[k] = (float)dlb_rng_normal(&r);
    for (int k = 0; k < N; k++)
        lab[k] = k % 10;
    run_on("ref");
    run_on("cpu");
    run_on("cuda"); /* where a GPU and the module exist; else skipped */
    return check_exit();
}
