/* A network's first convolution (one input channel) in int8, and the
 * quantisation of fp32 inputs.
 *
 * With one input channel oneDNN's int8 kernels have nothing to put in a
 * VNNI dot product (four input channels each): LeNet's conv1 took 1.8 ms
 * at batch 256 on one core, no faster than fp32, and the separate
 * quantisation of the images another 0.6 ms. Here each image is quantised
 * once into a padded plane (its border the zero point: the real value 0)
 * and unrolled (im2col) into rows that go through the int8 inner product.
 * One row holds the windows of P neighbouring output pixels at once: per
 * kernel row the P windows span (P - 1) * stride + kw bytes of the plane,
 * one 8-byte copy for LeNet's and vgg-small's kernels, and the weights
 * become [P * out_c][kh * span] with each filter shifted to its pixel's
 * place (zeros elsewhere). A row's [P][out_c] result is then P pixels of
 * the nhwc output, in place. On LeNet's conv1 at batch 256 (one core)
 * P = 4 took the whole layer from 1.5 to 1.0 ms, fp32 being 1.7. */
#include "cpu.h"
#include "../dtype.h"
#include "../int8.h"

#include <stdlib.h>
#include <string.h>

/* The unrolling copies 8 bytes per kernel row. */
#define COLS_COPY 8

/* How rows are laid out: P pixels per row, `span` bytes per kernel row,
 * k = kh * span bytes per row. */
struct cols_geom {
    uint32_t p, span;
    size_t k;
};

/* The most pixels per row whose span fits one copy and multiplies at
 * most 1.6 times the work of one pixel per row (the rows carry zeros for
 * the other pixels' taps): LeNet's 5-wide kernel takes four pixels
 * (0.7 -> 0.5 ms), vgg-small's 3-wide two (four: 1.6 ms, two: 1.0). */
static struct cols_geom geom(const struct dlb_conv2d_desc *d)
{
    static const uint32_t ps[] = { 4, 2 };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        uint32_t span = (ps[i] - 1) * d->stride_w + d->kw;
        if (d->out_w % ps[i] == 0 && span <= COLS_COPY && 5 * span <= 8 * d->kw)
            return (struct cols_geom){ ps[i], span, (size_t)d->kh * span };
    }
    return (struct cols_geom){ 1, d->kw, (size_t)d->kh * d->kw };
}

int dlb_cpu_int8_cols_fit(const struct dlb_conv2d_desc *d)
{
    return d->in_c == 1 && dlb_conv2d_groups(d) == 1 && d->kw <= COLS_COPY;
}

/* Image `img` of x quantised (or copied) into the padded plane p of pw
 * bytes per row, the border left as the caller filled it. */
static void fill_plane(const struct dlb_conv2d_desc *d,
                       const struct dlb_int8_desc *q,
                       const struct dlb_buffer *x, uint32_t img,
                       unsigned char *p, size_t pw)
{
    size_t hw = (size_t)d->in_h * d->in_w;
    for (uint32_t i = 0; i < d->in_h; i++) {
        unsigned char *row = p + (i + d->pad_h) * pw + d->pad_w;
        size_t at = img * hw + (size_t)i * d->in_w;
        if (x->dtype == DLB_F32)
            dlb_cpu_quantise_run(q, (const float *)x->data + at, row, d->in_w);
        else
            memcpy(row, (const unsigned char *)x->data + at, d->in_w);
    }
}

/* The rows of image `img`. Each kernel row but the last is one 8-byte
 * copy whose tail spills into the next kernel row's place, written right
 * after; the last copies `span` bytes. With kh and span known to the
 * compiler (UNROLL_FIXED: LeNet's and vgg-small's first layers) every copy
 * is a move or two, three times faster than over run-time sizes. */
#define UNROLL_BODY(KH, SPAN)                                               \
    do {                                                                    \
        size_t k_ = (size_t)(KH) * (SPAN), per_ = d->out_w / g->p;          \
        unsigned char *dst = cols + (size_t)img * d->out_h * per_ * k_;     \
        for (uint32_t i = 0; i < d->out_h; i++)                             \
            for (size_t j = 0; j < per_; j++, dst += k_) {                  \
                const unsigned char *src = p + (size_t)i * d->stride_h * pw \
                                           + j * g->p * d->stride_w;        \
                for (uint32_t r = 0; r + 1 < (KH); r++)                     \
                    memcpy(dst + r * (SPAN), src + r * pw, COLS_COPY);      \
                memcpy(dst + ((KH) - 1) * (SPAN), src + ((KH) - 1) * pw,    \
                       (SPAN));                                             \
            }                                                               \
    } while (0)

#define UNROLL_FIXED(KH, SPAN)                                              \
    static void unroll_##KH##x##SPAN(const struct dlb_conv2d_desc *d,       \
                                     const struct cols_geom *g,             \
                                     const unsigned char *p, size_t pw,     \
                                     unsigned char *cols, uint32_t img)     \
    {                                                                       \
        UNROLL_BODY(KH, SPAN);                                              \
    }
UNROLL_FIXED(5, 8) /* LeNet: 5x5, four pixels */
UNROLL_FIXED(3, 4) /* vgg-small: 3x3, two pixels */

static void unroll(const struct dlb_conv2d_desc *d, const struct cols_geom *g,
                   const unsigned char *p, size_t pw, unsigned char *cols,
                   uint32_t img)
{
    if (d->kh == 5 && g->span == 8)
        unroll_5x8(d, g, p, pw, cols, img);
    else if (d->kh == 3 && g->span == 4)
        unroll_3x4(d, g, p, pw, cols, img);
    else
        UNROLL_BODY(d->kh, g->span);
}

static dlb_status unroll_all(struct dlb_backend *be,
                             const struct dlb_conv2d_desc *d,
                             const struct cols_geom *g,
                             const struct dlb_int8_desc *q,
                             const struct dlb_buffer *x, unsigned char *cols)
{
    /* Rows of the plane carry slack for the last 8-byte copy. */
    size_t pw = (size_t)d->in_w + 2 * d->pad_w + COLS_COPY;
    size_t plane = ((size_t)d->in_h + 2 * d->pad_h) * pw;
    size_t work = (size_t)d->n * d->out_h * d->out_w * d->kh * d->kw;
    unsigned char zero = (unsigned char)(q->x_type == DLB_U8
                                             ? q->x_zero_point : 0);
    int nomem = 0;
    DLB_OMP("omp parallel if(work > DLB_CPU_PAR_MIN)")
    {
        unsigned char *p = malloc(plane);
        if (!p) {
            DLB_OMP("omp atomic write")
            nomem = 1;
        }
        DLB_OMP("omp for schedule(static)")
        for (uint32_t img = 0; img < d->n; img++) {
            if (!p)
                continue;
            memset(p, zero, plane);
            fill_plane(d, q, x, img, p, pw);
            unroll(d, g, p, pw, cols, img);
        }
        free(p);
    }
    (void)work;
    return nomem ? dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu conv2d_int8_fwd: "
                                    "out of memory for an image plane")
                 : DLB_OK;
}

/* The weights, scales and bias of P pixels per row: filter o of pixel p
 * is row p * out_c + o, shifted by p * stride within each kernel row. */
struct packed {
    struct dlb_buffer *w;        /* S8 [p * out_c][k], kept beside the
                                    weights (bi->packed) with the product's
                                    reordered copy of it */
    float *scale;                /* [p * out_c], or [1] */
    int32_t *bias;               /* [p * out_c], or NULL */
    struct dlb_buffer ws, b;     /* views of scale and bias */
    struct dlb_cpu_buf wsi, bi;
};

static void packed_free(struct packed *pk)
{
    free(pk->scale);
    free(pk->bias);
}

/* w's packed form, built again only after w was written: at batch 1 the
 * packing and the product's reorder of it would cost as much as the
 * layer. */
static dlb_status packed_weights(struct dlb_backend *be,
                                 const struct dlb_conv2d_desc *d,
                                 const struct cols_geom *g,
                                 const struct dlb_buffer *w,
                                 struct dlb_buffer **out)
{
    struct dlb_cpu_buf *bi = w->impl;
    size_t oc = d->out_c, rows = g->p * oc;
    uint32_t geom_code = g->p << 16 | g->span;
    const signed char *src = w->data;
    if (bi->packed && bi->packed_version == bi->version &&
        bi->packed_geom == geom_code && bi->packed->count == rows * g->k) {
        *out = bi->packed;
        return DLB_OK;
    }
    dlb_cpu_buffer_free(be, bi->packed);
    bi->packed = NULL;
    dlb_status s = dlb_cpu_buffer_alloc(be, DLB_S8, rows * g->k, &bi->packed);
    if (s)
        return s;
    signed char *dst = bi->packed->data;
    memset(dst, 0, rows * g->k);
    for (size_t p = 0; p < g->p; p++)
        for (size_t o = 0; o < oc; o++) {
            signed char *row = dst + (p * oc + o) * g->k + p * d->stride_w;
            for (size_t r = 0; r < d->kh; r++)
                memcpy(row + r * g->span, src + (o * d->kh + r) * d->kw,
                       d->kw);
        }
    dlb_cpu_written(bi->packed);
    bi->packed_version = bi->version;
    bi->packed_geom = geom_code;
    *out = bi->packed;
    return DLB_OK;
}

static dlb_status pack(struct dlb_backend *be, const struct dlb_conv2d_desc *d,
                       const struct cols_geom *g, const struct dlb_buffer *w,
                       const struct dlb_buffer *w_scale,
                       const struct dlb_buffer *b, struct packed *pk)
{
    size_t oc = d->out_c, rows = g->p * oc, ns = w_scale->count == 1 ? 1 : rows;
    dlb_status s = packed_weights(be, d, g, w, &pk->w);
    pk->scale = malloc(ns * sizeof *pk->scale);
    pk->bias = b ? malloc(rows * sizeof *pk->bias) : NULL;
    if (s || !pk->scale || (b && !pk->bias))
        return s ? s : dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu "
                                        "conv2d_int8_fwd: out of memory");
    for (size_t p = 0; p < g->p; p++)
        for (size_t o = 0; o < oc; o++) {
            if (ns > 1)
                pk->scale[p * oc + o] = ((const float *)w_scale->data)[o];
            if (b)
                pk->bias[p * oc + o] = ((const int32_t *)b->data)[o];
        }
    if (ns == 1)
        pk->scale[0] = ((const float *)w_scale->data)[0];
    dlb_cpu_scratch_buffer(DLB_F32, ns, pk->scale, &pk->ws, &pk->wsi);
    if (b)
        dlb_cpu_scratch_buffer(DLB_S32, rows, pk->bias, &pk->b, &pk->bi);
    return DLB_OK;
}

dlb_status dlb_cpu_conv2d_int8_cols(struct dlb_backend *be,
                                    const struct dlb_conv2d_desc *d,
                                    const struct dlb_int8_desc *q,
                                    const struct dlb_buffer *x,
                                    const struct dlb_buffer *w,
                                    const struct dlb_buffer *w_scale,
                                    const struct dlb_buffer *b,
                                    struct dlb_buffer *y)
{
    const char *op = "conv2d_int8_fwd";
    struct cols_geom g = geom(d);
    size_t m = (size_t)d->n * d->out_h * d->out_w / g.p;
    struct packed pk = { 0 };
    struct dlb_buffer cb;
    struct dlb_cpu_buf ci;
    dlb_status s = DLB_CPU_PLAIN(be, x, w, w_scale, b);
    unsigned char *cols = s ? NULL : dlb_cpu_scratch(be, DLB_CPU_SLOT_INT8,
                                                     m * g.k + COLS_COPY);
    if (s || !cols)
        return s ? s : DLB_ERR_NOMEM;
    if ((s = unroll_all(be, d, &g, q, x, cols)) ||
        (s = pack(be, d, &g, w, w_scale, b, &pk))) {
        packed_free(&pk);
        return s;
    }
    dlb_cpu_scratch_buffer(q->x_type, m * g.k, cols, &cb, &ci);
    struct dlb_linear_desc ld = { (uint32_t)m, (uint32_t)g.k, g.p * d->out_c };
    s = dlb_cpu_linear_int8_fwd(be, &ld, q, &cb, pk.w, &pk.ws,
                                b ? &pk.b : NULL, y);
    packed_free(&pk);
    if (s)
        return s;
    /* [pixels][channels] is the nhwc layout of y. */
    dlb_dnnl_md nhwc;
    dnnl_dims_t dims = { d->n, d->out_c, d->out_h, d->out_w };
    dnnl_status_t st = dlb_dnnl_md_tag(
        &nhwc, 4, dims, dlb_cpu_dnnl_type(y->dtype), dnnl_acdb);
    if (st != dnnl_success)
        return dlb_cpu_dnnl_fail(be, st, op, "dnnl_memory_desc_init_by_tag");
    return dlb_cpu_set_layout(be, y, &nhwc);
}
