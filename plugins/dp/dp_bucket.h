/* Gradient buckets: the learnable tensors grouped, in the order backward
 * finishes them (last layer first), into runs of about bucket_bytes, each
 * all-reduced as one message. A bucket is ready once backward is done
 * with the lowest layer it holds. */
#ifndef DLB_DP_BUCKET_H
#define DLB_DP_BUCKET_H

#include <stddef.h>

#include <dlbench/model_api.h>

struct dp_bucket {
    unsigned lo, hi;          /* learnable tensors lo..hi, inclusive */
    unsigned ready_layer;     /* the layer whose backward completes it */
    size_t offset, count;     /* floats, in the flat gradient */
};

struct dp_plan {
    struct dp_bucket *b;      /* in the order they become ready */
    unsigned n;
    struct dlb_param_info *params;
    unsigned n_params;
    size_t *offset;           /* each tensor's place in the flat gradient */
    size_t total;             /* floats in all */
};

dlb_status dp_plan_build(const struct dlb_host *h, const struct dlb_model *m,
                         size_t bucket_bytes, struct dp_plan *out);
void dp_plan_free(struct dp_plan *p);

/* Buckets ready once backward has finished `layer`: advance *next over
 * them and return how many there are, starting at the old *next. */
unsigned dp_plan_ready(const struct dp_plan *p, unsigned layer,
                       unsigned *next);

#endif
