/* The one check of an operation before a kernel sees it: the tensors its
 * kind and propagation need are there, hold at least the elements the
 * attributes say, and are of the right class (float, S32 indices, int8),
 * and the shapes follow from each other. A descriptor that fails is a
 * caller's bug, reported the same way on every device (the table of
 * tensors is <dlbench/backend.h>'s). Which float types a kernel computes
 * in is the kernel's own question (`applies`). */
#include "backend.h"
#include "backend_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum cls { ANY, FLOAT, S32, INT8, FLOAT_OR_INT8 };

struct chk {
    struct dlb_backend *be;
    const struct dlb_op *op;
    dlb_status st;
};

static int is_float(enum dlb_dtype t)
{
    return t == DLB_F32 || t == DLB_F16 || t == DLB_BF16 || t == DLB_F64;
}

static int in_class(enum dlb_dtype t, enum cls c)
{
    switch (c) {
    case FLOAT: return is_float(t);
    case S32: return t == DLB_S32;
    case INT8: return t == DLB_S8 || t == DLB_U8;
    case FLOAT_OR_INT8: return is_float(t) || t == DLB_S8 || t == DLB_U8;
    case ANY: break;
    }
    return 1;
}

static const char *class_name(enum cls c)
{
    static const char *const n[] = {"any", "a float", "an S32", "an S8 or U8",
                                    "a float or int8"};
    return n[c];
}

static void fail(struct chk *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fail(struct chk *c, const char *fmt, ...)
{
    if (c->st != DLB_OK)
        return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->st = dlb_backend_fail(c->be, DLB_ERR_INTERNAL, "%s %s%s%s%s%s: %s",
                             dlb_backend_name(c->be), dlb_op_kind_name(c->op->kind),
                             c->op->prop ? " " : "", dlb_prop_name(c->op->prop),
                             c->op->label ? " of " : "",
                             c->op->label ? c->op->label : "", msg);
}

/* Tensor `name` (NULL allowed when `opt`) of class `c` with at least
 * `count` elements. */
static void t(struct chk *c, const struct dlb_buffer *b, const char *name,
              enum cls cl, size_t count, int opt)
{
    const char *arrow = strstr(name, "->");
    if (arrow) /* "o->dy" from the macros below: the tensor's name */
        name = arrow + 2;
    if (!b) {
        if (!opt)
            fail(c, "tensor %s is missing", name);
        return;
    }
    if (!in_class(b->dtype, cl)) {
        fail(c, "%s must be %s buffer (type %d)", name, class_name(cl),
             (int)b->dtype);
    } else if (b->count < count) {
        fail(c, "tensor %s holds %zu elements; the descriptor needs %zu", name,
             b->count, count);
    }
}

#define NEED(b, cl, n) t(c, (b), #b, cl, (n), 0)
#define OPT(b, cl, n) t(c, (b), #b, cl, (n), 1)

static void conv(struct chk *c)
{
    const struct dlb_op *o = c->op;
    const struct dlb_conv2d_desc *d = &o->conv;
    size_t xs = dlb_conv2d_x_count(d), ws = dlb_conv2d_w_count(d);
    size_t ys = dlb_conv2d_y_count(d);
    if (c->st == DLB_OK)
        c->st = dlb_conv2d_desc_check(c->be, dlb_op_kind_name(o->kind), d);
    switch (o->prop) {
    case DLB_PROP_FWD_TRAIN:
    case DLB_PROP_FWD_INFER:
        NEED(o->x, FLOAT, xs); NEED(o->w, FLOAT, ws); OPT(o->b, FLOAT, d->out_c);
        NEED(o->y, FLOAT, ys);
        break;
    case DLB_PROP_BWD_DATA:
        NEED(o->w, FLOAT, ws); NEED(o->dy, FLOAT, ys); NEED(o->dx, FLOAT, xs);
        break;
    case DLB_PROP_BWD_WEIGHTS:
        NEED(o->x, FLOAT, xs); NEED(o->dy, FLOAT, ys); NEED(o->dw, FLOAT, ws);
        OPT(o->db, FLOAT, d->out_c);
        break;
    default:
        fail(c, "no such propagation of conv2d");
    }
}

/* CONV2D_DW: the 1x1 convolution's tensors as a forward's, then the
 * depthwise one's on its output (which is never a buffer). */
static void conv_dw(struct chk *c)
{
    const struct dlb_op *o = c->op;
    const struct dlb_conv2d_desc *d = &o->conv, *e = &o->dwconv;
    if (c->st == DLB_OK)
        c->st = dlb_conv2d_desc_check(c->be, "conv2d_dw (1x1)", d);
    if (c->st == DLB_OK)
        c->st = dlb_conv2d_desc_check(c->be, "conv2d_dw (depthwise)", e);
    if (c->st != DLB_OK)
        return;
    if (o->prop != DLB_PROP_FWD_INFER)
        fail(c, "conv2d_dw is an inference operation (FWD_INFER)");
    else if (!dlb_conv2d_dw_pair(d, e))
        fail(c, "not a 1x1 convolution (stride 1, no padding, one group) and "
             "a depthwise 3x3 one over its output (padding 1, stride 1 or 2): "
             "%ux%u stride %u pad %u, %u groups, -> %ux%ux%u; then %ux%ux%u, "
             "%ux%u stride %ux%u pad %u, %u groups, %u outputs", d->kh, d->kw,
             d->stride_h, d->pad_h, dlb_conv2d_groups(d), d->out_c, d->out_h,
             d->out_w, e->in_c, e->in_h, e->in_w, e->kh, e->kw, e->stride_h,
             e->stride_w, e->pad_h, dlb_conv2d_groups(e), e->out_c);
    else if (!(o->relu_max >= 0.0f) || !(o->relu2_max >= 0.0f)) /* NaN too */
        fail(c, "relu_max and relu2_max must be 0 (no clip) or positive, not "
             "%g and %g", (double)o->relu_max, (double)o->relu2_max);
    else if (o->x && o->x == o->y)
        fail(c, "x and y are one buffer");
    NEED(o->x, FLOAT, dlb_conv2d_x_count(d));
    NEED(o->w, FLOAT, dlb_conv2d_w_count(d));
    OPT(o->b, FLOAT, d->out_c);
    NEED(o->w2, FLOAT, dlb_conv2d_w_count(e));
    OPT(o->b2, FLOAT, e->out_c);
    NEED(o->y, FLOAT, dlb_conv2d_y_count(e));
}

static size_t pool_in(const struct dlb_pool_desc *p)
{
    return (size_t)p->n * p->c * p->in_h * p->in_w;
}

static size_t pool_out(const struct dlb_pool_desc *p)
{
    return (size_t)p->n * p->c * p->out_h * p->out_w;
}

static void pool(struct chk *c)
{
    const struct dlb_op *o = c->op;
    const struct dlb_pool_desc *p = &o->pool;
    if (c->st == DLB_OK)
        c->st = dlb_pool_desc_check(c->be, "pool", p);
    if (o->prop == DLB_PROP_BWD) {
        /* average pooling needs no workspace */
        NEED(o->dy, FLOAT, pool_out(p));
        t(c, o->ws, "o->ws", S32, pool_out(p), p->kind != DLB_POOL_MAX);
        NEED(o->dx, FLOAT, pool_in(p));
        return;
    }
    NEED(o->x, FLOAT_OR_INT8, pool_in(p));
    NEED(o->y, FLOAT_OR_INT8, pool_out(p));
    OPT(o->ws, S32, pool_out(p));
    if (c->st == DLB_OK && in_class(o->x->dtype, INT8) != in_class(o->y->dtype, INT8))
        fail(c, "x and y are of other classes (int8 and float)");
}

static void conv_pool(struct chk *c)
{
    const struct dlb_op *o = c->op;
    const struct dlb_conv2d_desc *d = &o->conv;
    const struct dlb_pool_desc *p = &o->pool;
    if (c->st == DLB_OK)
        c->st = dlb_conv2d_desc_check(c->be, "conv2d_pool", d);
    if (c->st == DLB_OK)
        c->st = dlb_pool_desc_check(c->be, "conv2d_pool", p);
    if (p->n != d->n || p->c != d->out_c || p->in_h != d->out_h ||
        p->in_w != d->out_w)
        fail(c, "%s: the pooling's input is not the convolution's output"
             "", "conv2d_pool");
    NEED(o->x, FLOAT, dlb_conv2d_x_count(d));
    if (o->prop == DLB_PROP_BWD_WEIGHTS) {
        NEED(o->dy, FLOAT, pool_out(p)); NEED(o->ws, S32, pool_out(p));
        NEED(o->dw, FLOAT, dlb_conv2d_w_count(d)); OPT(o->db, FLOAT, d->out_c);
        return;
    }
    NEED(o->w, FLOAT, dlb_conv2d_w_count(d)); OPT(o->b, FLOAT, d->out_c);
    NEED(o->y, FLOAT, pool_out(p)); OPT(o->ws, S32, pool_out(p));
}

static void bnorm(struct chk *c)
{
    const struct dlb_op *o = c->op;
    const struct dlb_batchnorm_desc *d = &o->bn;
    size_t n = (size_t)d->n * d->c * d->hw;
    NEED(o->x, FLOAT, n); NEED(o->w, FLOAT, d->c);
    if (o->prop == DLB_PROP_BWD) {
        NEED(o->dy, FLOAT, n); NEED(o->save_mean, FLOAT, d->c);
        NEED(o->save_invstd, FLOAT, d->c); NEED(o->dx, FLOAT, n);
        NEED(o->dw, FLOAT, d->c); NEED(o->db, FLOAT, d->c);
        if (o->kind == DLB_OP_BATCHNORM_RELU) {
            NEED(o->y, FLOAT, n); NEED(o->b, FLOAT, d->c);
        }
        return;
    }
    NEED(o->b, FLOAT, d->c); NEED(o->mean, FLOAT, d->c); NEED(o->var, FLOAT, d->c);
    NEED(o->y, FLOAT, n);
    if (o->prop == DLB_PROP_FWD_TRAIN) {
        NEED(o->save_mean, FLOAT, d->c); NEED(o->save_invstd, FLOAT, d->c);
    }
}

static void linear(struct chk *c, enum cls xcl, enum cls wcl)
{
    const struct dlb_op *o = c->op;
    const struct dlb_linear_desc *d = &o->linear;
    size_t xs = (size_t)d->n * d->in, ws = (size_t)d->out * d->in;
    size_t ys = (size_t)d->n * d->out;
    NEED(o->x, xcl, xs); NEED(o->w, wcl, ws);
    if (o->prop == DLB_PROP_BWD) {
        NEED(o->dy, FLOAT, ys); OPT(o->dx, FLOAT, xs); NEED(o->dw, FLOAT, ws);
        OPT(o->db, FLOAT, d->out);
        return;
    }
    OPT(o->b, o->kind == DLB_OP_LINEAR_INT8 ? S32 : FLOAT, d->out);
    NEED(o->y, FLOAT_OR_INT8, ys);
}

static void loss(struct chk *c)
{
    const struct dlb_op *o = c->op;
    size_t n = (size_t)o->loss.n * o->loss.classes;
    NEED(o->x, FLOAT, n);
    if (o->kind == DLB_OP_LOGSOFTMAX) {
        NEED(o->y, FLOAT, n);
        return;
    }
    NEED(o->labels, S32, o->loss.n);
    if (o->kind == DLB_OP_NLL_LOSS)
        NEED(o->y, FLOAT, 1);
    else
        NEED(o->dx, FLOAT, n);
}

/* An inference fusion's own attributes: FWD_INFER, a ReLU's clip that is
 * 0 or positive, and with a sum onto y (CONV2D_ADD, CONV2D_INT8_ADD) an
 * x that is not y. 1 when they hold (a failure before is kept). */
static int fused_infer(struct chk *c, int sum)
{
    const struct dlb_op *o = c->op;
    if (o->prop != DLB_PROP_FWD_INFER)
        fail(c, "%s is an inference operation (FWD_INFER)",
             dlb_op_kind_name(o->kind));
    else if (!(o->relu_max >= 0.0f)) /* NaN too */
        fail(c, "relu_max must be 0 (no clip) or positive, not %g",
             (double)o->relu_max);
    else if (sum && o->x && o->x == o->y)
        fail(c, "x and y are one buffer: the sum onto y would overwrite "
             "the input the convolution still reads");
    else
        return 1;
    return 0;
}

static void int8_layer(struct chk *c)
{
    const struct dlb_op *o = c->op;
    size_t out = o->kind == DLB_OP_LINEAR_INT8 ? o->linear.out : o->conv.out_c;
    if (!(o->q.x_scale > 0))
        fail(c, "x_scale must be positive");
    if (o->w_scale && o->w_scale->count != 1 && o->w_scale->count < out)
        fail(c, "tensor %s holds %zu elements; it needs 1 or %zu", "w_scale",
             o->w_scale->count, out);
    NEED(o->w_scale, FLOAT, 1);
    if (o->kind == DLB_OP_LINEAR_INT8) {
        linear(c, FLOAT_OR_INT8, INT8);
        return;
    }
    const struct dlb_conv2d_desc *d = &o->conv;
    if (c->st == DLB_OK)
        c->st = dlb_conv2d_desc_check(c->be, "conv2d_int8", d);
    NEED(o->x, FLOAT_OR_INT8, dlb_conv2d_x_count(d));
    NEED(o->w, INT8, dlb_conv2d_w_count(d)); OPT(o->b, S32, d->out_c);
    if (o->kind != DLB_OP_CONV2D_INT8_ADD) {
        NEED(o->y, FLOAT_OR_INT8, dlb_conv2d_y_count(d));
        return;
    }
    NEED(o->y, FLOAT, dlb_conv2d_y_count(d));
    if (c->st == DLB_OK && o->y->dtype != DLB_F32)
        fail(c, "y must be F32: the sum is the fp32 branch's");
    fused_infer(c, 1);
}

static void elementwise(struct chk *c)
{
    const struct dlb_op *o = c->op;
    size_t n = o->count;
    switch (o->kind) {
    case DLB_OP_RELU:
        if (!(o->relu_max >= 0.0f)) /* NaN too */
            fail(c, "relu_max must be 0 (no clip) or positive, not %g",
                 (double)o->relu_max);
        if (o->prop == DLB_PROP_BWD) {
            NEED(o->y, FLOAT, n); NEED(o->dy, FLOAT, n); NEED(o->dx, FLOAT, n);
        } else {
            NEED(o->x, FLOAT, n); NEED(o->y, FLOAT, n);
        }
        break;
    case DLB_OP_CAST: NEED(o->x, FLOAT, n); NEED(o->y, FLOAT, n); break;
    case DLB_OP_SCALE:
    case DLB_OP_FILL:
    case DLB_OP_ALLREDUCE_SUM: NEED(o->y, ANY, n); break;
    case DLB_OP_UNSCALE_CHECK: NEED(o->y, FLOAT, n); NEED(o->found, S32, 1); break;
    case DLB_OP_CHECK_FINITE:
        NEED(o->x, FLOAT, n);
        if (!o->nonfinite)
            fail(c, "no answer to write to");
        break;
    case DLB_OP_QUANTIZE: NEED(o->x, FLOAT, n); NEED(o->y, INT8, n); break;
    case DLB_OP_DEQUANTIZE: NEED(o->x, INT8, n); NEED(o->y, FLOAT, n); break;
    case DLB_OP_ADD_RELU:
        if (!(o->relu_max >= 0.0f)) /* NaN too */
            fail(c, "relu_max must be 0 (no clip) or positive, not %g",
                 (double)o->relu_max);
        /* fall through */
    case DLB_OP_ADD:
        NEED(o->x, FLOAT, n); NEED(o->g, FLOAT, n); NEED(o->y, FLOAT, n);
        if (c->st == DLB_OK && (o->x->dtype != o->y->dtype ||
                                o->g->dtype != o->y->dtype))
            fail(c, "x, g and y must be of one type (types %d, %d, %d)",
                 (int)o->x->dtype, (int)o->g->dtype, (int)o->y->dtype);
        break;
    default: break;
    }
}

dlb_status dlb_op_check(struct dlb_backend *be, const struct dlb_op *op)
{
    struct chk ck = {be, op, DLB_OK}, *c = &ck;
    size_t n;
    switch (op->kind) {
    case DLB_OP_CONV2D: conv(c); break;
    case DLB_OP_CONV2D_POOL: conv_pool(c); break;
    case DLB_OP_CONV2D_RELU:
    case DLB_OP_CONV2D_ADD:
        if (fused_infer(c, op->kind == DLB_OP_CONV2D_ADD))
            conv(c);
        break;
    case DLB_OP_CONV2D_DW: conv_dw(c); break;
    case DLB_OP_POOL: pool(c); break;
    case DLB_OP_DROPOUT:
        n = (size_t)op->drop.n * op->drop.c * op->drop.hw;
        if (op->prop == DLB_PROP_BWD) {
            NEED(op->dy, FLOAT, n); NEED(op->dx, FLOAT, n);
        } else {
            NEED(op->x, FLOAT, n); NEED(op->y, FLOAT, n);
        }
        break;
    case DLB_OP_BATCHNORM:
    case DLB_OP_BATCHNORM_RELU: bnorm(c); break;
    case DLB_OP_LINEAR: linear(c, FLOAT, FLOAT); break;
    case DLB_OP_LINEAR_CSR:
        NEED(op->x, FLOAT, (size_t)op->csr.n * op->csr.in);
        NEED(op->row_ptr, S32, (size_t)op->csr.out + 1);
        NEED(op->col, S32, op->csr.nnz); NEED(op->val, FLOAT, op->csr.nnz);
        OPT(op->b, FLOAT, op->csr.out);
        NEED(op->y, FLOAT, (size_t)op->csr.n * op->csr.out);
        break;
    case DLB_OP_LOGSOFTMAX:
    case DLB_OP_NLL_LOSS:
    case DLB_OP_LOGSOFTMAX_NLL: loss(c); break;
    case DLB_OP_SGD:
    case DLB_OP_SGD_IF_FINITE:
        NEED(op->param, FLOAT, op->sgd.count); NEED(op->g, FLOAT, op->sgd.count);
        NEED(op->v, FLOAT, op->sgd.count);
        if (op->kind == DLB_OP_SGD_IF_FINITE)
            NEED(op->found, S32, 1);
        break;
    case DLB_OP_CONV2D_INT8:
    case DLB_OP_CONV2D_INT8_ADD:
    case DLB_OP_LINEAR_INT8: int8_layer(c); break;
    case DLB_OP_RELU:
    case DLB_OP_UNSCALE_CHECK:
    case DLB_OP_CAST:
    case DLB_OP_SCALE:
    case DLB_OP_CHECK_FINITE:
    case DLB_OP_FILL:
    case DLB_OP_QUANTIZE:
    case DLB_OP_DEQUANTIZE:
    case DLB_OP_ADD:
    case DLB_OP_ADD_RELU:
    case DLB_OP_ALLREDUCE_SUM: elementwise(c); break;
    case DLB_OP_CONCAT: {
        const struct dlb_concat_desc *d = &op->concat;
        size_t part = (size_t)d->n * d->c * d->hw;
        size_t all = (size_t)d->n * d->c_total * d->hw;
        if (d->c == 0 || d->offset + d->c > d->c_total)
            fail(c, "channels [%u, %u) outside the %u of the output",
                 d->offset, d->offset + d->c, d->c_total);
        const struct dlb_buffer *a = op->prop == DLB_PROP_BWD ? op->dy : op->x;
        const struct dlb_buffer *b = op->prop == DLB_PROP_BWD ? op->dx : op->y;
        if (op->prop == DLB_PROP_BWD) {
            NEED(op->dy, FLOAT, all); NEED(op->dx, FLOAT, part);
        } else {
            NEED(op->x, FLOAT, part); NEED(op->y, FLOAT, all);
        }
        if (c->st == DLB_OK && a->dtype != b->dtype)
            fail(c, "input and output must be of one type (%d, %d)",
                 (int)a->dtype, (int)b->dtype);
        break;
    }
    default:
        fail(c, "unknown kind of operation %d", (int)op->kind);
    }
    return ck.st;
}
