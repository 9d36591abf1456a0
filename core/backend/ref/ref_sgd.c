/* SGD with momentum and weight decay, PyTorch's formulation. */
#include "ref.h"

dlb_status dlb_ref_sgd_update(struct dlb_backend *be,
                              const struct dlb_sgd_desc *d,
                              struct dlb_buffer *w, const struct dlb_buffer *g,
                              struct dlb_buffer *v)
{
    double *t[3] = { 0 };
    dlb_status s;
    if (!(s = dlb_ref_get(be, "sgd_update", "w", w, d->count, &t[0])) &&
        !(s = dlb_ref_get(be, "sgd_update", "g", g, d->count, &t[1])) &&
        !(s = dlb_ref_get(be, "sgd_update", "v", v, d->count, &t[2]))) {
        for (size_t i = 0; i < d->count; i++) {
            double grad = t[1][i] + (double)d->weight_decay * t[0][i];
            t[2][i] = (double)d->momentum * t[2][i] + grad;
            t[0][i] -= (double)d->lr * t[2][i];
        }
        dlb_ref_put(v, t[2], d->count);
        dlb_ref_put(w, t[0], d->count);
    }
    dlb_ref_free_all(t, 3);
    return s;
}
