/* Running an operation: the one check, then the first kernel of the
 * backend's list that applies (as oneDNN's implementation lists: the
 * order is the backend's preference), and with the profile on, the time
 * and the kernel of every run. */
#include "backend.h"
#include "backend_impl.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const kind_names[DLB_OP_KIND_COUNT] = {
    [DLB_OP_CONV2D] = "conv2d", [DLB_OP_CONV2D_POOL] = "conv2d_pool",
    [DLB_OP_POOL] = "pool", [DLB_OP_RELU] = "relu",
    [DLB_OP_DROPOUT] = "dropout", [DLB_OP_BATCHNORM] = "batchnorm",
    [DLB_OP_BATCHNORM_RELU] = "batchnorm_relu", [DLB_OP_LINEAR] = "linear",
    [DLB_OP_LINEAR_CSR] = "linear_csr", [DLB_OP_LOGSOFTMAX] = "logsoftmax",
    [DLB_OP_NLL_LOSS] = "nll_loss", [DLB_OP_LOGSOFTMAX_NLL] = "logsoftmax_nll",
    [DLB_OP_SGD] = "sgd", [DLB_OP_SGD_IF_FINITE] = "sgd_if_finite",
    [DLB_OP_UNSCALE_CHECK] = "unscale_check", [DLB_OP_CAST] = "cast",
    [DLB_OP_SCALE] = "scale", [DLB_OP_CHECK_FINITE] = "check_finite",
    [DLB_OP_FILL] = "fill", [DLB_OP_QUANTIZE] = "quantize",
    [DLB_OP_DEQUANTIZE] = "dequantize", [DLB_OP_ALLREDUCE_SUM] = "allreduce_sum",
    [DLB_OP_CONV2D_INT8] = "conv2d_int8", [DLB_OP_LINEAR_INT8] = "linear_int8",
    [DLB_OP_ADD] = "add", [DLB_OP_CONCAT] = "concat",
    [DLB_OP_CONV2D_RELU] = "conv2d_relu", [DLB_OP_ADD_RELU] = "add_relu",
    [DLB_OP_CONV2D_ADD] = "conv2d_add", [DLB_OP_CONV2D_DW] = "conv2d_dw",
    [DLB_OP_CONV2D_INT8_ADD] = "conv2d_int8_add",
};

static const char *const prop_names[DLB_PROP_COUNT] = {
    [DLB_PROP_NONE] = "", [DLB_PROP_FWD_TRAIN] = "fwd_train",
    [DLB_PROP_FWD_INFER] = "fwd_infer", [DLB_PROP_BWD] = "bwd",
    [DLB_PROP_BWD_DATA] = "bwd_data", [DLB_PROP_BWD_WEIGHTS] = "bwd_weights",
};

const char *dlb_op_kind_name(enum dlb_op_kind k)
{
    return (unsigned)k < DLB_OP_KIND_COUNT ? kind_names[k] : "unknown";
}

const char *dlb_prop_name(enum dlb_prop p)
{
    return (unsigned)p < DLB_PROP_COUNT ? prop_names[p] : "unknown";
}

const struct dlb_kernel *dlb_backend_kernel_for(struct dlb_backend *be,
                                                const struct dlb_op *op)
{
    const struct dlb_backend_ops *o = be->ops;
    if ((unsigned)op->prop >= DLB_PROP_COUNT)
        return NULL;
    for (size_t i = 0; i < o->n_kernels; i++) {
        const struct dlb_kernel *k = &o->kernels[i];
        if (k->kind == op->kind && (k->props & DLB_PROPS(op->prop)) &&
            (!k->applies || k->applies(be, op)))
            return k;
    }
    return NULL;
}

int dlb_backend_has_kind(const struct dlb_backend *be, enum dlb_op_kind kind)
{
    for (size_t i = 0; i < be->ops->n_kernels; i++)
        if (be->ops->kernels[i].kind == kind)
            return 1;
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The profile's entry for (label, kind, prop, kernel), made on first use;
 * NULL without memory (the run is then not counted). The entry keeps its
 * own copy of the label: the profile is read after the model that named
 * the operations may be gone (the child writes it at the end of the
 * configuration). */
static struct dlb_op_profile *entry(struct dlb_backend *be,
                                    const struct dlb_op *op,
                                    const struct dlb_kernel *k)
{
    for (size_t i = 0; i < be->n_prof; i++) {
        struct dlb_op_profile *e = &be->prof[i];
        int same_label = e->label == op->label ||
                         (e->label && op->label && !strcmp(e->label, op->label));
        if (same_label && e->kind == op->kind && e->prop == op->prop &&
            e->kernel == k->name)
            return e;
    }
    if (be->n_prof == be->cap_prof) {
        size_t cap = be->cap_prof ? 2 * be->cap_prof : 64;
        struct dlb_op_profile *p = realloc(be->prof, cap * sizeof *p);
        if (!p)
            return NULL;
        be->prof = p;
        be->cap_prof = cap;
    }
    char *label = NULL;
    if (op->label && !(label = strdup(op->label)))
        return NULL;
    struct dlb_op_profile *e = &be->prof[be->n_prof++];
    *e = (struct dlb_op_profile){label, op->kind, op->prop, k->name, 0, 0};
    return e;
}

dlb_status dlb_backend_run(struct dlb_backend *be, const struct dlb_op *op)
{
    dlb_status s = dlb_op_check(be, op);
    if (s != DLB_OK)
        return s;
    const struct dlb_kernel *k = dlb_backend_kernel_for(be, op);
    if (!k)
        return dlb_backend_fail(be, DLB_ERR_UNSUPPORTED, "backend %s has no "
                                "kernel for %s%s%s%s%s", be->ops->name,
                                dlb_op_kind_name(op->kind),
                                op->prop ? " " : "", dlb_prop_name(op->prop),
                                op->label ? " of " : "",
                                op->label ? op->label : "");
    if (!be->profile)
        return k->run(be, op);
    /* Each operation timed alone: the device waits after it, which a GPU
     * pays for (the profile says where time goes, not how fast a step is) */
    double t0 = now_s();
    s = k->run(be, op);
    if (s == DLB_OK && be->ops->synchronize)
        s = be->ops->synchronize(be);
    double dt = now_s() - t0;
    struct dlb_op_profile *e = entry(be, op, k);
    if (e) {
        e->calls++;
        e->seconds += dt;
    }
    return s;
}

size_t dlb_backend_profile(const struct dlb_backend *be,
                           const struct dlb_op_profile **out)
{
    *out = be->prof;
    return be->n_prof;
}

void dlb_backend_profile_reset(struct dlb_backend *be)
{
    for (size_t i = 0; i < be->n_prof; i++)
        free((char *)be->prof[i].label);
    be->n_prof = 0;
}

int dlb_backend_profiling(const struct dlb_backend *be)
{
    return be->profile;
}

const char *dlb_backend_fewer_flops(const struct dlb_backend *be)
{
    switch (be->fewer_flops) {
    case DLB_FAST_ALGO_WINOGRAD:
        return "winograd";
    case DLB_FAST_ALGO_FFT:
        return "fft";
    case DLB_FAST_ALGO_NONE:
        break;
    }
    return NULL;
}

void dlb_backend_fewer_flops_reset(struct dlb_backend *be)
{
    be->fewer_flops = DLB_FAST_ALGO_NONE;
}
