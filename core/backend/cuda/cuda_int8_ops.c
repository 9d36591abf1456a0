/* int8 inference on the cuda backend (backend.h, API 1.1): the linear
 * layer and the convolution as an s8 GEMM with int32 accumulators
 * (cuda_int8_gemm.c) and the module's epilogue (cuda_int8.cu), and max
 * pooling of int8 planes.
 *
 * Convolutions are im2col + that GEMM, not cuDNN's int8 convolution:
 * cuDNN takes s8 x only (no u8 with a zero point, and its padding is the
 * stored value 0, not the real value 0 that backend.h asks for), wants
 * NHWC or NCHW_VECT_C with channels in multiples of 4 (LeNet's first
 * layer has one), and gives float or requantised outputs whose rounding
 * steps are its own. The column matrix carries the zero point into the
 * padding, quantises an f32 x on the way, and pads k to a multiple of 4,
 * so every shape runs on cuBLASLt's IMMA kernels and the integer part is
 * exact; the epilogue repeats ref's float steps, so y matches ref's bit
 * for bit. The column matrix costs memory: the images go through in
 * chunks that keep it and the accumulators under DLB_CUDA_INT8_CHUNK.
 *
 * u8 activations enter the GEMM shifted by 128 (cuda_int8_kernels.h says
 * why and how the epilogue corrects it). */
#include "cuda_int8.h"
#include "cuda_int8_kernels.h"

#include <stdint.h>

/* The column matrix and the accumulators of one chunk of images. */
#define DLB_CUDA_INT8_CHUNK ((size_t)64 << 20)

/* Scratch slots of these operations (cuda.h: any op may use any slot). */
enum { SLOT_X = 0, SLOT_W = 1, SLOT_ROWSUM = 2, SLOT_ACC = 3 };

static dlb_status launched(struct dlb_backend *be, cudaError_t e,
                           const char *op, const char *what)
{
    return dlb_cuda_check(be, e, op, what);
}

static struct dlb_cuda_int8_src src_of(const struct dlb_int8_desc *q,
                                       const struct dlb_buffer *x)
{
    struct dlb_cuda_int8_src s = { x->data, (int)x->dtype,
                                   q->x_type == DLB_U8, q->x_scale,
                                   q->x_zero_point };
    return s;
}

/* The epilogue's fields that do not depend on the layer's geometry. */
static struct dlb_cuda_int8_epi epi_of(const struct dlb_int8_desc *q,
                                       const struct dlb_buffer *w_scale,
                                       const struct dlb_buffer *b,
                                       struct dlb_buffer *y, uint32_t out_c)
{
    struct dlb_cuda_int8_epi e = {0};
    e.out_c = out_c;
    e.bias = b ? b->data : NULL;
    e.corr = q->x_zero_point - (q->x_type == DLB_U8 ? 128 : 0);
    e.w_scale = w_scale->data;
    e.per_channel = w_scale->count > 1;
    e.x_scale = q->x_scale;
    e.y_scale = q->y_scale;
    e.y_zero_point = q->y_zero_point;
    e.relu = q->relu;
    e.y = y->data;
    e.ty = (int)y->dtype;
    return e;
}

/* rowsum of w [m][k] into e->rowsum when the zero point needs it. */
static dlb_status rowsum(struct dlb_backend *be, const char *op,
                         const struct dlb_buffer *w, uint32_t m, uint32_t k,
                         struct dlb_cuda_int8_epi *e)
{
    void *p;
    dlb_status s;
    if (!e->corr)
        return DLB_OK;
    if ((s = dlb_cuda_scratch(be, SLOT_ROWSUM, (size_t)m * sizeof(int32_t),
                              &p)))
        return s;
    e->rowsum = p;
    return launched(be, dlb_cuda_k_int8_rowsum(dlb_cuda_of(be)->stream, m, k,
                                               w->data, p),
                    op, "weight row sums");
}

dlb_status dlb_cuda_linear_int8_fwd(struct dlb_backend *be,
                                    const struct dlb_linear_desc *d,
                                    const struct dlb_int8_desc *q,
                                    const struct dlb_buffer *x,
                                    const struct dlb_buffer *w,
                                    const struct dlb_buffer *w_scale,
                                    const struct dlb_buffer *b,
                                    struct dlb_buffer *y)
{
    const char *op = "linear_int8_fwd";
    struct dlb_cuda *cu = dlb_cuda_of(be);
    struct dlb_int8_args a = { x, w, w_scale, b, y, (size_t)d->n * d->in,
                               (size_t)d->out * d->in, (size_t)d->n * d->out,
                               d->out };
    struct dlb_cuda_int8_epi e;
    const int8_t *xs = x ? x->data : NULL;
    void *acc, *tmp;
    dlb_status s;
    if (!d->n || !d->in || !d->out)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: empty shape "
                             "%ux%u -> %u", op, d->n, d->in, d->out);
    if ((s = dlb_cuda_int8_check(be, op, q, &a)))
        return s;
    /* An s8 x is the GEMM's operand as it is; f32 and u8 are converted. */
    if (x->dtype != DLB_S8) {
        if ((s = dlb_cuda_scratch(be, SLOT_X, a.x_count, &tmp)) ||
            (s = launched(be, dlb_cuda_k_int8_shift(cu->stream, a.x_count,
                                                    src_of(q, x), tmp),
                          op, "activations to s8")))
            return s;
        xs = tmp;
    }
    e = epi_of(q, w_scale, b, y, d->out);
    if ((s = dlb_cuda_scratch(be, SLOT_ACC, a.y_count * sizeof(int32_t),
                              &acc)) ||
        (s = rowsum(be, op, w, d->out, d->in, &e)) ||
        (s = dlb_cuda_int8_gemm(be, op, d->out, d->n, d->in, w->data, d->in,
                                xs, d->in, acc, d->out)))
        return s;
    e.c = acc;
    e.ldc = d->out;
    e.cols = d->n;
    e.plane = 1;
    return launched(be, dlb_cuda_k_int8_epilogue(cu->stream, &e), op,
                    "requantisation");
}

static uint32_t round4(uint32_t v)
{
    return (v + 3u) & ~3u;
}

dlb_status dlb_cuda_conv2d_int8_fwd(struct dlb_backend *be,
                                    const struct dlb_conv2d_desc *d,
                                    const struct dlb_int8_desc *q,
                                    const struct dlb_buffer *x,
                                    const struct dlb_buffer *w,
                                    const struct dlb_buffer *w_scale,
                                    const struct dlb_buffer *b,
                                    struct dlb_buffer *y)
{
    const char *op = "conv2d_int8_fwd";
    struct dlb_cuda *cu = dlb_cuda_of(be);
    struct dlb_int8_args a = { x, w, w_scale, b, y, dlb_conv2d_x_count(d),
                               dlb_conv2d_w_count(d), dlb_conv2d_y_count(d),
                               d->out_c };
    struct dlb_cuda_int8_epi e;
    void *col, *acc, *wp;
    dlb_status s;
    if ((s = dlb_cuda_core->conv2d_desc_check(be, op, d)) ||
        (s = dlb_cuda_int8_check(be, op, q, &a)))
        return s;
    /* One GEMM over every input channel: a grouped weight matrix would have
     * to be spread block-diagonally over all of them first, g times the
     * work; refused rather than computed as a dense convolution. */
    if (dlb_conv2d_groups(d) > 1)
        return dlb_cuda_fail(be, DLB_ERR_UNSUPPORTED, "cuda %s: %u groups: "
                             "the int8 convolution takes one group only "
                             "(run the layer in a float type)", op,
                             dlb_conv2d_groups(d));
    uint64_t kall = (uint64_t)d->in_c * d->kh * d->kw;
    size_t plane = (size_t)d->out_h * d->out_w;
    if (kall > UINT32_MAX - 3u || d->out_c > UINT32_MAX - 3u)
        return dlb_cuda_fail(be, DLB_ERR_UNSUPPORTED, "cuda %s: %llu inputs "
                             "per output exceed the int8 GEMM's 32-bit "
                             "dimensions", op, (unsigned long long)kall);
    if (!d->n || !plane)
        return DLB_OK;
    uint32_t k = (uint32_t)kall, k4 = round4(k), m4 = round4(d->out_c);
    /* Weights in the GEMM's padded form; [out_c][in_c][kh][kw] is already
     * it when both counts are multiples of 4. */
    const int8_t *wa = w->data;
    if (k4 != k || m4 != d->out_c) {
        if ((s = dlb_cuda_scratch(be, SLOT_W, (size_t)m4 * k4, &wp)) ||
            (s = launched(be, dlb_cuda_k_int8_pack(cu->stream, d->out_c, k,
                                                   w->data, m4, k4, wp),
                          op, "weight padding")))
            return s;
        wa = wp;
    }
    e = epi_of(q, w_scale, b, y, d->out_c);
    if ((s = rowsum(be, op, w, d->out_c, k, &e)))
        return s;
    size_t per_img = plane * ((size_t)k4 + (size_t)m4 * sizeof(int32_t));
    size_t chunk = DLB_CUDA_INT8_CHUNK / per_img;
    chunk = chunk < 1 ? 1 : chunk > d->n ? d->n : chunk;
    if ((s = dlb_cuda_scratch(be, SLOT_X, chunk * plane * k4, &col)) ||
        (s = dlb_cuda_scratch(be, SLOT_ACC,
                              chunk * plane * m4 * sizeof(int32_t), &acc)))
        return s;
    e.c = acc;
    e.ldc = m4;
    e.plane = (uint32_t)plane;
    for (size_t n0 = 0; n0 < d->n; n0 += chunk) {
        uint32_t cnt = (uint32_t)(d->n - n0 < chunk ? d->n - n0 : chunk);
        e.cols = (size_t)cnt * plane;
        e.y_off = n0 * d->out_c * plane;
        if ((s = launched(be, dlb_cuda_k_int8_im2col(cu->stream, *d,
                                                     (uint32_t)n0, cnt,
                                                     src_of(q, x), col, k4),
                          op, "column matrix")) ||
            (s = dlb_cuda_int8_gemm(be, op, m4, e.cols, k4, wa, k4, col, k4,
                                    acc, m4)) ||
            (s = launched(be, dlb_cuda_k_int8_epilogue(cu->stream, &e), op,
                          "requantisation")))
            return s;
    }
    return DLB_OK;
}

dlb_status dlb_cuda_pool_int8_fwd(struct dlb_backend *be,
                                  const struct dlb_pool_desc *d,
                                  const struct dlb_buffer *x,
                                  struct dlb_buffer *y)
{
    const char *op = "pool_int8_fwd";
    size_t planes = (size_t)d->n * d->c;
    size_t xn = planes * d->in_h * d->in_w, yn = planes * d->out_h * d->out_w;
    dlb_status s;
    if ((s = dlb_cuda_core->pool_desc_check(be, op, d)))
        return s;
    if (d->kind != DLB_POOL_MAX)
        return dlb_cuda_fail(be, DLB_ERR_UNSUPPORTED, "cuda %s: only max "
                             "pooling keeps int8 data exact", op);
    if (!x || !y || (x->dtype != DLB_S8 && x->dtype != DLB_U8) ||
        y->dtype != x->dtype || x->count < xn || y->count < yn)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: x and y must be "
                             "s8 or u8 of one type with %zu and %zu elements",
                             op, xn, yn);
    if (!yn)
        return DLB_OK;
    return launched(be, dlb_cuda_k_int8_pool(dlb_cuda_of(be)->stream, *d,
                                             x->data, y->data,
                                             x->dtype == DLB_U8),
                    op, "kernel launch");
}
