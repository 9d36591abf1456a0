/* Opening the teacher, filling the cache, answering a batch. */
#include "kd_teacher.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The last layer (the logsoftmax) of `m`: its input width is the number
 * of classes the logits have. */
static dlb_status shape_of(const struct dlb_host *h, const struct dlb_model *m,
                           struct dlb_layer_info *first, uint32_t *classes)
{
    const struct dlb_model_api *mo = h->model_api;
    unsigned n = mo->node_count(h, m);
    struct dlb_layer_info last;
    dlb_status s;
    if (n < 2)
        return DLB_ERR_INPUT;
    if ((s = mo->node_info(h, m, 0, first)) ||
        (s = mo->node_info(h, m, n - 1, &last)))
        return s;
    *classes = last.in_c;
    return DLB_OK;
}

dlb_status kd_teacher_open(struct kd_teacher *t, const struct dlb_host *h,
                           const char *name, uint64_t steps,
                           struct dlb_model *student, char *why, size_t len)
{
    struct dlb_layer_info ti, si;
    uint32_t sc = 0;
    dlb_status s;
    memset(t, 0, sizeof *t);
    struct dlb_model_open how = {.struct_size = sizeof how, .name = name,
                                 .steps = steps};
    s = h->model_api->open(h, &how, &t->model);
    if (s != DLB_OK) {
        snprintf(why, len, "teacher '%s' could not be opened (the log "
                 "says why)", name);
        return s;
    }
    if ((s = shape_of(h, t->model, &ti, &t->classes)) ||
        (s = shape_of(h, student, &si, &sc))) {
        snprintf(why, len, "teacher '%s': layers unreadable", name);
        return s;
    }
    if (ti.in_c != si.in_c || ti.in_h != si.in_h || ti.in_w != si.in_w ||
        t->classes != sc) {
        snprintf(why, len, "teacher '%s' takes %ux%ux%u images in %u classes; "
                 "the student takes %ux%ux%u in %u", name, ti.in_c, ti.in_h,
                 ti.in_w, t->classes, si.in_c, si.in_h, si.in_w, sc);
        return DLB_ERR_INPUT;
    }
    t->per = (size_t)ti.in_c * ti.in_h * ti.in_w;
    return DLB_OK;
}

/* Room for a batch of n. */
static dlb_status reserve(struct kd_teacher *t, uint32_t n)
{
    if (n <= t->cap)
        return DLB_OK;
    free(t->scratch);
    free(t->miss_images);
    free(t->miss_logits);
    free(t->miss_rows);
    t->scratch = malloc(t->per * sizeof *t->scratch);
    t->miss_images = malloc((size_t)n * t->per * sizeof *t->miss_images);
    t->miss_logits = malloc((size_t)n * t->classes * sizeof *t->miss_logits);
    t->miss_rows = malloc((size_t)n * sizeof *t->miss_rows);
    t->cap = n;
    if (t->scratch && t->miss_images && t->miss_logits && t->miss_rows)
        return DLB_OK;
    t->cap = 0;
    return DLB_ERR_NOMEM;
}

struct image_src {
    const struct dlb_host *h;
    const struct dlb_dataset *ds;
};

/* Image `index` of the training set as a step sees it unaugmented. */
static int load_image(void *ctx, uint32_t index, float *out)
{
    const struct image_src *src = ctx;
    int32_t label;
    return src->h->batch_fill(src->h, src->ds, &index, 1, 0, 0, 0, 0, out,
                              &label) != DLB_OK;
}

dlb_status kd_teacher_build_cache(struct kd_teacher *t,
                                  const struct dlb_host *h, uint32_t chunk)
{
    uint32_t n, c, hh, w, classes;
    dlb_status s = h->model_api->dataset(h, 1, &t->train);
    if (s != DLB_OK)
        return s;
    h->dataset_shape(h, t->train, &n, &c, &hh, &w, &classes);
    if ((size_t)c * hh * w != t->per || chunk == 0)
        return DLB_ERR_INPUT;
    if ((s = reserve(t, chunk)) != DLB_OK ||
        !(t->cache = kd_cache_create(n, t->classes, t->per)))
        return DLB_ERR_NOMEM;
    /* The batch scratch serves the chunks: miss_rows their indices,
     * miss_images their images, miss_logits their logits. */
    int32_t *labels = malloc((size_t)chunk * sizeof *labels);
    if (!labels)
        return DLB_ERR_NOMEM;
    for (uint32_t start = 0; start < n && s == DLB_OK; start += chunk) {
        uint32_t k = n - start < chunk ? n - start : chunk;
        for (uint32_t i = 0; i < k; i++)
            t->miss_rows[i] = start + i;
        s = h->batch_fill(h, t->train, t->miss_rows, k, 0, 0, 0, 0,
                          t->miss_images, labels);
        if (s == DLB_OK)
            s = h->model_api->infer(h, t->model, t->miss_images, k,
                                    DLB_OUT_LOGITS, t->miss_logits);
        for (uint32_t i = 0; s == DLB_OK && i < k; i++)
            kd_cache_put(t->cache, start + i, t->miss_images + i * t->per,
                         t->miss_logits + (size_t)i * t->classes);
    }
    free(labels);
    return s;
}

dlb_status kd_teacher_logits(struct kd_teacher *t, const struct dlb_host *h,
                             const struct dlb_batch *b, float *out)
{
    struct image_src src = {h, t->train};
    uint32_t missed = 0;
    dlb_status s;
    if (!t->cache) {
        t->misses += b->n;
        return h->model_api->infer(h, t->model, b->images, b->n,
                                   DLB_OUT_LOGITS, out);
    }
    if ((s = reserve(t, b->n)) != DLB_OK)
        return s;
    for (uint32_t i = 0; i < b->n; i++) {
        const float *img = b->images + i * t->per;
        const float *row = kd_cache_find(t->cache, img, load_image, &src,
                                         t->scratch);
        if (row) {
            memcpy(out + (size_t)i * t->classes, row,
                   t->classes * sizeof *row);
            continue;
        }
        memcpy(t->miss_images + missed * t->per, img, t->per * sizeof *img);
        t->miss_rows[missed++] = i;
    }
    t->hits += b->n - missed;
    t->misses += missed;
    if (!missed)
        return DLB_OK;
    s = h->model_api->infer(h, t->model, t->miss_images, missed,
                            DLB_OUT_LOGITS, t->miss_logits);
    for (uint32_t k = 0; s == DLB_OK && k < missed; k++)
        memcpy(out + (size_t)t->miss_rows[k] * t->classes,
               t->miss_logits + (size_t)k * t->classes,
               t->classes * sizeof *out);
    return s;
}

void kd_teacher_close(struct kd_teacher *t, const struct dlb_host *h)
{
    if (t->model)
        h->model_api->release(h, t->model);
    kd_cache_free(t->cache);
    free(t->scratch);
    free(t->miss_images);
    free(t->miss_logits);
    free(t->miss_rows);
    memset(t, 0, sizeof *t);
}
