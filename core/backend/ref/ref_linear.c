/* Fully connected layer with weights [out][in], as common frameworks. */
#include "ref.h"

dlb_status dlb_ref_linear_fwd(struct dlb_backend *be,
                              const struct dlb_linear_desc *d,
                              const struct dlb_buffer *x,
                              const struct dlb_buffer *w,
                              const struct dlb_buffer *b, struct dlb_buffer *y)
{
    const char *op = "linear_fwd";
    double *t[4] = { 0 };
    dlb_status s;
    if ((s = dlb_ref_get(be, op, "x", x, (size_t)d->n * d->in, &t[0])) ||
        (s = dlb_ref_get(be, op, "w", w, (size_t)d->out * d->in, &t[1])) ||
        (b && (s = dlb_ref_get(be, op, "b", b, d->out, &t[2]))) ||
        (s = dlb_ref_new(be, op, "y", y, (size_t)d->n * d->out, &t[3])))
        goto out;
    for (uint32_t n = 0; n < d->n; n++)
        for (uint32_t o = 0; o < d->out; o++) {
            double acc = b ? t[2][o] : 0.0;
            for (uint32_t i = 0; i < d->in; i++)
                acc += t[0][(size_t)n * d->in + i] * t[1][(size_t)o * d->in + i];
            t[3][(size_t)n * d->out + o] = acc;
        }
    dlb_ref_put(y, t[3], (size_t)d->n * d->out);
out:
    dlb_ref_free_all(t, 4);
    return s;
}

dlb_status dlb_ref_linear_bwd(struct dlb_backend *be,
                              const struct dlb_linear_desc *d,
                              const struct dlb_buffer *x,
                              const struct dlb_buffer *w,
                              const struct dlb_buffer *dy, struct dlb_buffer *dx,
                              struct dlb_buffer *dw, struct dlb_buffer *db)
{
    const char *op = "linear_bwd";
    double *t[6] = { 0 };
    dlb_status s;
    if ((s = dlb_ref_get(be, op, "x", x, (size_t)d->n * d->in, &t[0])) ||
        (s = dlb_ref_get(be, op, "w", w, (size_t)d->out * d->in, &t[1])) ||
        (s = dlb_ref_get(be, op, "dy", dy, (size_t)d->n * d->out, &t[2])) ||
        (dx && (s = dlb_ref_new(be, op, "dx", dx, (size_t)d->n * d->in, &t[3]))) ||
        (s = dlb_ref_new(be, op, "dw", dw, (size_t)d->out * d->in, &t[4])) ||
        (db && (s = dlb_ref_new(be, op, "db", db, d->out, &t[5]))))
        goto out;
    for (uint32_t n = 0; n < d->n; n++)
        for (uint32_t o = 0; o < d->out; o++) {
            double g = t[2][(size_t)n * d->out + o];
            if (db)
                t[5][o] += g;
            for (uint32_t i = 0; i < d->in; i++) {
                t[4][(size_t)o * d->in + i] += g * t[0][(size_t)n * d->in + i];
                if (dx)
                    t[3][(size_t)n * d->in + i] += g * t[1][(size_t)o * d->in + i];
            }
        }
    if (dx)
        dlb_ref_put(dx, t[3], (size_t)d->n * d->in);
    dlb_ref_put(dw, t[4], (size_t)d->out * d->in);
    if (db)
        dlb_ref_put(db, t[5], d->out);
out:
    dlb_ref_free_all(t, 6);
    return s;
}
