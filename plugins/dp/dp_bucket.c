/* Gradient buckets (dp_bucket.h), built as common frameworks build them:
 * tensors in reverse order, a bucket closed once it holds bucket_bytes. */
#include "dp_bucket.h"

#include <stdlib.h>
#include <string.h>

dlb_status dp_plan_build(const struct dlb_host *h, const struct dlb_model *m,
                         size_t bucket_bytes, struct dp_plan *out)
{
    const struct dlb_model_api *api = h->model_api;
    unsigned n = api->tensor_count(h, m);
    dlb_status s = DLB_OK;
    memset(out, 0, sizeof *out);
    if (n == 0)
        return DLB_ERR_INPUT;
    out->params = calloc(n, sizeof *out->params);
    out->offset = calloc(n, sizeof *out->offset);
    out->b = calloc(n, sizeof *out->b);
    if (!out->params || !out->offset || !out->b) {
        dp_plan_free(out);
        return DLB_ERR_NOMEM;
    }
    out->n_params = n;
    for (unsigned i = 0; i < n && s == DLB_OK; i++)
        s = api->tensor_info(h, m, i, &out->params[i]);
    if (s != DLB_OK) {
        dp_plan_free(out);
        return s;
    }
    /* Walk backward's order; a bucket's tensors sit in ascending order in
     * the flat gradient, so each bucket is one contiguous message. */
    size_t off = 0;
    for (unsigned hi = n; hi-- > 0;) {
        unsigned lo = hi;
        size_t bytes = out->params[hi].count * sizeof(float);
        while (lo > 0 && bytes < bucket_bytes) {
            lo--;
            bytes += out->params[lo].count * sizeof(float);
        }
        struct dp_bucket *b = &out->b[out->n++];
        b->lo = lo;
        b->hi = hi;
        b->ready_layer = out->params[lo].layer;
        b->offset = off;
        for (unsigned i = lo; i <= hi; i++) {
            out->offset[i] = off;
            off += out->params[i].count;
        }
        b->count = off - b->offset;
        hi = lo;
    }
    out->total = off;
    return DLB_OK;
}

void dp_plan_free(struct dp_plan *p)
{
    free(p->b);
    free(p->params);
    free(p->offset);
    memset(p, 0, sizeof *p);
}

unsigned dp_plan_ready(const struct dp_plan *p, unsigned layer, unsigned *next)
{
    unsigned first = *next;
    while (*next < p->n && p->b[*next].ready_layer >= layer)
        (*next)++;
    return *next - first;
}
