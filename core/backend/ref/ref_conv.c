/* 2-D convolution, forward and both backward passes, as the textbook
 * sums: y[n][k][i][j] = b[k] + sum_{c,r,s} x[n][c][i*S+r-P][j*S+s-P] w[k][c][r][s].
 * With groups, c runs over output channel k's group of input channels
 * only, and indexes w within the group. The backward passes scatter along
 * the same index map, so the three stay consistent by construction. */
#include "ref.h"

/* Visit every (output, input, weight) index triple that contributes; the
 * three passes differ only in what they accumulate. */
enum conv_pass { FWD, BWD_DATA, BWD_WEIGHTS };

static void conv_loops(const struct dlb_conv2d_desc *d, enum conv_pass pass,
                       const double *a, const double *b, double *acc)
{
    uint32_t icg = d->in_c / dlb_conv2d_groups(d); /* inputs per group */
    uint32_t ocg = d->out_c / dlb_conv2d_groups(d);
    for (uint32_t n = 0; n < d->n; n++)
    for (uint32_t k = 0; k < d->out_c; k++)
    for (uint32_t i = 0; i < d->out_h; i++)
    for (uint32_t j = 0; j < d->out_w; j++) {
        size_t yi = (((size_t)n * d->out_c + k) * d->out_h + i) * d->out_w + j;
        uint32_t c0 = k / ocg * icg;
        for (uint32_t c = c0; c < c0 + icg; c++)
        for (uint32_t r = 0; r < d->kh; r++) {
            long ih = (long)i * d->stride_h + r - (long)d->pad_h;
            if (ih < 0 || ih >= (long)d->in_h)
                continue;
            for (uint32_t s = 0; s < d->kw; s++) {
                long iw = (long)j * d->stride_w + s - (long)d->pad_w;
                if (iw < 0 || iw >= (long)d->in_w)
                    continue;
                size_t xi = (((size_t)n * d->in_c + c) * d->in_h + (size_t)ih)
                            * d->in_w + (size_t)iw;
                size_t wi = (((size_t)k * icg + c - c0) * d->kh + r) * d->kw + s;
                switch (pass) {
                case FWD: acc[yi] += a[xi] * b[wi]; break;          /* a=x b=w */
                case BWD_DATA: acc[xi] += a[yi] * b[wi]; break;     /* a=dy b=w */
                case BWD_WEIGHTS: acc[wi] += a[yi] * b[xi]; break;  /* a=dy b=x */
                }
            }
        }
    }
}

dlb_status dlb_ref_conv2d_fwd(struct dlb_backend *be,
                              const struct dlb_conv2d_desc *d,
                              const struct dlb_buffer *x,
                              const struct dlb_buffer *w,
                              const struct dlb_buffer *b, struct dlb_buffer *y)
{
    double *t[4] = { 0 };
    dlb_status s;
    if ((s = dlb_conv2d_desc_check(be, "conv2d_fwd", d)) ||
        (s = dlb_ref_get(be, "conv2d_fwd", "x", x, dlb_conv2d_x_count(d), &t[0])) ||
        (s = dlb_ref_get(be, "conv2d_fwd", "w", w, dlb_conv2d_w_count(d), &t[1])) ||
        (b && (s = dlb_ref_get(be, "conv2d_fwd", "b", b, d->out_c, &t[2]))) ||
        (s = dlb_ref_new(be, "conv2d_fwd", "y", y, dlb_conv2d_y_count(d), &t[3])))
        goto out;
    conv_loops(d, FWD, t[0], t[1], t[3]);
    if (b) {
        size_t plane = (size_t)d->out_h * d->out_w;
        for (size_t i = 0; i < dlb_conv2d_y_count(d); i++)
            t[3][i] += t[2][(i / plane) % d->out_c];
    }
    dlb_ref_put(y, t[3], dlb_conv2d_y_count(d));
out:
    dlb_ref_free_all(t, 4);
    return s;
}

dlb_status dlb_ref_conv2d_bwd_data(struct dlb_backend *be,
                                   const struct dlb_conv2d_desc *d,
                                   const struct dlb_buffer *w,
                                   const struct dlb_buffer *dy,
                                   struct dlb_buffer *dx)
{
    double *t[3] = { 0 };
    dlb_status s;
    if ((s = dlb_conv2d_desc_check(be, "conv2d_bwd_data", d)) ||
        (s = dlb_ref_get(be, "conv2d_bwd_data", "w", w, dlb_conv2d_w_count(d), &t[0])) ||
        (s = dlb_ref_get(be, "conv2d_bwd_data", "dy", dy, dlb_conv2d_y_count(d), &t[1])) ||
        (s = dlb_ref_new(be, "conv2d_bwd_data", "dx", dx, dlb_conv2d_x_count(d), &t[2])))
        goto out;
    conv_loops(d, BWD_DATA, t[1], t[0], t[2]);
    dlb_ref_put(dx, t[2], dlb_conv2d_x_count(d));
out:
    dlb_ref_free_all(t, 3);
    return s;
}

dlb_status dlb_ref_conv2d_bwd_weights(struct dlb_backend *be,
                                      const struct dlb_conv2d_desc *d,
                                      const struct dlb_buffer *x,
                                      const struct dlb_buffer *dy,
                                      struct dlb_buffer *dw,
                                      struct dlb_buffer *db)
{
    double *t[4] = { 0 };
    dlb_status s;
    if ((s = dlb_conv2d_desc_check(be, "conv2d_bwd_weights", d)) ||
        (s = dlb_ref_get(be, "conv2d_bwd_weights", "x", x, dlb_conv2d_x_count(d), &t[0])) ||
        (s = dlb_ref_get(be, "conv2d_bwd_weights", "dy", dy, dlb_conv2d_y_count(d), &t[1])) ||
        (s = dlb_ref_new(be, "conv2d_bwd_weights", "dw", dw, dlb_conv2d_w_count(d), &t[2])) ||
        (db && (s = dlb_ref_new(be, "conv2d_bwd_weights", "db", db, d->out_c,
                                &t[3]))))
        goto out;
    conv_loops(d, BWD_WEIGHTS, t[1], t[0], t[2]);
    dlb_ref_put(dw, t[2], dlb_conv2d_w_count(d));
    if (db) {
        size_t plane = (size_t)d->out_h * d->out_w;
        for (size_t i = 0; i < dlb_conv2d_y_count(d); i++)
            t[3][(i / plane) % d->out_c] += t[1][i];
        dlb_ref_put(db, t[3], d->out_c);
    }
out:
    dlb_ref_free_all(t, 4);
    return s;
}

/* The ReLU of the rounded output is the rounded ReLU (both are monotone
 * and keep zero), so this is what a fused kernel must write, bit for bit
 * in F32. */
dlb_status dlb_ref_conv2d_relu(struct dlb_backend *be, const struct dlb_op *op)
{
    dlb_status s = dlb_ref_conv2d_fwd(be, &op->conv, op->x, op->w, op->b, op->y);
    if (s != DLB_OK)
        return s;
    return dlb_ref_relu_fwd(be, dlb_conv2d_y_count(&op->conv), op->relu_max,
                            op->y, op->y);
}

dlb_status dlb_ref_conv_onto(struct dlb_backend *be, const struct dlb_op *op,
                             const char *name,
                             dlb_status (*conv)(struct dlb_backend *,
                                                const struct dlb_op *))
{
    size_t n = dlb_conv2d_y_count(&op->conv);
    double *t[2] = { 0 };
    dlb_status s;
    if (!(s = dlb_ref_get(be, name, "y", op->y, n, &t[0])) &&
        !(s = conv(be, op)) &&
        !(s = dlb_ref_get(be, name, "y", op->y, n, &t[1]))) {
        for (size_t i = 0; i < n; i++)
            t[1][i] += t[0][i];
        dlb_ref_put(op->y, t[1], n);
        if (op->relu)
            s = dlb_ref_relu_fwd(be, n, op->relu_max, op->y, op->y);
    }
    dlb_ref_free_all(t, 2);
    return s;
}

static dlb_status conv_into_y(struct dlb_backend *be, const struct dlb_op *op)
{
    return dlb_ref_conv2d_fwd(be, &op->conv, op->x, op->w, op->b, op->y);
}

/* CONV2D_ADD: the convolution onto y's contents. */
dlb_status dlb_ref_conv2d_add(struct dlb_backend *be, const struct dlb_op *op)
{
    return dlb_ref_conv_onto(be, op, "conv2d_add", conv_into_y);
}

/* CONV2D_DW: CONV2D_RELU twice, through a tensor of the 1x1's output in
 * y's type (what the two layers apart would have written between them:
 * F32, or a mixed-precision network's BF16). */
dlb_status dlb_ref_conv2d_dw(struct dlb_backend *be, const struct dlb_op *op)
{
    struct dlb_buffer *t = NULL;
    dlb_status s = dlb_ref_buffer_alloc(be, op->y->dtype,
                                        dlb_conv2d_y_count(&op->conv), &t);
    if (s == DLB_OK)
        s = dlb_ref_conv2d_fwd(be, &op->conv, op->x, op->w, op->b, t);
    if (s == DLB_OK && op->relu)
        s = dlb_ref_relu_fwd(be, dlb_conv2d_y_count(&op->conv), op->relu_max,
                             t, t);
    if (s == DLB_OK)
        s = dlb_ref_conv2d_fwd(be, &op->dwconv, t, op->w2, op->b2, op->y);
    if (s == DLB_OK && op->relu2)
        s = dlb_ref_relu_fwd(be, dlb_conv2d_y_count(&op->dwconv), op->relu2_max,
                             op->y, op->y);
    dlb_ref_buffer_free(be, t);
    return s;
}
