/* The quantisation run: accuracy of the fp32 model, calibration passes
 * over training images (the extra quant.observe), activation and weight
 * scales, apply, then the figures of the int8 model against the fp32 one:
 * accuracy, size and the SQNR of each int8 layer's output on one batch. */
#include <dlbench/model_api.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"

/* --quick: calibration stays CI-sized. */
#define QUANT_QUICK_IMAGES 128u

/* Per observation point: the input of layer i (i == n_layers: the
 * model's output). */
struct point {
    int quant;                 /* layer i is conv or linear */
    struct dlb_layer_info info;
    struct qc_stats st;
    float *ref;                /* fp32 values of the SQNR batch */
    size_t ref_count;
    double signal, noise;
};

struct run {
    const struct quant_settings *qs;
    const struct dlb_host *h;
    const struct dlb_model_api *api;
    dlb_extra_quant_observe observe;
    dlb_extra_quant_folded_weights folded_weights;
    struct dlb_model *m;
    unsigned nl;
    struct point *p;           /* nl + 1 */
    enum { PASS_RANGE, PASS_HIST, PASS_SQNR } pass;
    int first_batch;           /* keep the SQNR reference */
    float *sqnr_images;        /* the first calibration batch */
    uint32_t sqnr_n;
};

/* Log what ran out and return DLB_ERR_NOMEM (host calls log their own
 * failures). */
static dlb_status oom(const struct dlb_host *h, const char *what)
{
    h->log(h, DLB_LOG_ERROR, "out of memory for %s", what);
    return DLB_ERR_NOMEM;
}

static dlb_status keep_ref(struct point *p, const float *x, size_t count)
{
    free(p->ref);
    p->ref = malloc(count * sizeof *p->ref);
    if (!p->ref)
        return DLB_ERR_NOMEM;
    memcpy(p->ref, x, count * sizeof *x);
    p->ref_count = count;
    return DLB_OK;
}

static dlb_status observer(void *ctx, unsigned layer, const float *x,
                           uint32_t n, size_t per_image)
{
    struct run *r = ctx;
    struct point *p = &r->p[layer];
    size_t count = (size_t)n * per_image;
    if (layer > r->nl)
        return DLB_ERR_INTERNAL;
    switch (r->pass) {
    case PASS_RANGE:
        if (p->quant)
            qc_observe_range(&p->st, x, count, r->qs->averaging);
        return r->first_batch ? keep_ref(p, x, count) : DLB_OK;
    case PASS_HIST:
        if (p->quant)
            qc_observe_hist(&p->st, x, count);
        return DLB_OK;
    case PASS_SQNR:
        if (!p->ref || p->ref_count != count)
            return DLB_ERR_INTERNAL;
        for (size_t k = 0; k < count; k++) {
            double d = (double)x[k] - p->ref[k];
            p->signal += (double)p->ref[k] * p->ref[k];
            p->noise += d * d;
        }
        return DLB_OK;
    }
    return DLB_ERR_INTERNAL;
}

/* The first batch's images, for the SQNR pass after apply. */
static dlb_status keep_images(struct run *r, const float *images, uint32_t n,
                              size_t per_image)
{
    r->sqnr_images = malloc((size_t)n * per_image * sizeof *images);
    if (!r->sqnr_images)
        return DLB_ERR_NOMEM;
    memcpy(r->sqnr_images, images, (size_t)n * per_image * sizeof *images);
    r->sqnr_n = n;
    return DLB_OK;
}

/* One pass of observe over the calibration images. */
static dlb_status pass(struct run *r, const struct dlb_dataset *ds,
                       const uint32_t *idx, uint32_t count, size_t per_image,
                       float *images, int32_t *labels)
{
    const struct dlb_host *h = r->h;
    uint32_t b = r->qs->calib_batch;
    dlb_status s = DLB_OK;
    for (uint32_t start = 0, no = 0; s == DLB_OK && start < count;
         start += b, no++) {
        uint32_t nb = count - start < b ? count - start : b;
        s = h->batch_fill(h, ds, idx + start, nb, 0, h->seed, 0, no, images,
                          labels);
        r->first_batch = no == 0;
        if (s == DLB_OK && r->first_batch && r->pass == PASS_RANGE)
            s = keep_images(r, images, nb, per_image);
        if (s == DLB_OK)
            s = r->observe(h, r->m, images, nb, observer, r);
    }
    return s;
}

static int needs_hist(enum qc_method m)
{
    return m == QC_PERCENTILE || m == QC_ENTROPY;
}

static dlb_status calibrate(struct run *r)
{
    const struct dlb_host *h = r->h;
    const struct dlb_dataset *ds = NULL;
    uint32_t n = 0, c = 0, hh = 0, w = 0, classes = 0;
    dlb_status s = r->api->dataset(h, 1, &ds);
    if (s != DLB_OK)
        return s;
    h->dataset_shape(h, ds, &n, &c, &hh, &w, &classes);
    uint32_t count = r->qs->calib_images < n ? r->qs->calib_images : n;
    if (h->quick && count > QUANT_QUICK_IMAGES)
        count = QUANT_QUICK_IMAGES;
    uint32_t b = r->qs->calib_batch < count ? r->qs->calib_batch : count;
    size_t per = (size_t)c * hh * w;
    uint32_t *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
    float *images = malloc((size_t)b * per * sizeof *images + 1);
    int32_t *labels = malloc((size_t)b * sizeof *labels + 1);
    if (!count) {
        h->log(h, DLB_LOG_ERROR, "the training set is empty: no images to "
               "calibrate on");
        s = DLB_ERR_INPUT;
    } else if (!idx || !images || !labels) {
        s = oom(h, "calibration batches");
    }
    if (s == DLB_OK) {
        /* The seeded shuffle of epoch 0: a sample of every class. */
        h->epoch_order(h, ds, h->seed, 0, 1, idx);
        r->pass = PASS_RANGE;
        s = pass(r, ds, idx, count, per, images, labels);
    }
    for (unsigned i = 0; s == DLB_OK && needs_hist(r->qs->method) &&
                         i < r->nl; i++)
        if (r->p[i].quant && !qc_hist_begin(&r->p[i].st))
            s = oom(h, "calibration histograms");
    if (s == DLB_OK && needs_hist(r->qs->method)) {
        r->pass = PASS_HIST;
        s = pass(r, ds, idx, count, per, images, labels);
    }
    if (s == DLB_OK)
        h->metric(h, "calib_images", "images", count);
    free(idx);
    free(images);
    free(labels);
    return s;
}

/* Symmetric s8 weight scales of layer i: absmax / 127 per tensor or per
 * output channel, of the weights the int8 layer computes with. */
static dlb_status weight_scales(struct run *r, unsigned i, float **out,
                                uint32_t *n_out)
{
    const struct dlb_layer_info *li = &r->p[i].info;
    size_t wn = li->weight_count, oc = li->out_c, per = wn / oc;
    float *w = malloc(wn * sizeof *w), *b = malloc(oc * sizeof *b);
    uint32_t n = r->qs->per_channel ? (uint32_t)oc : 1;
    float *sc = malloc(n * sizeof *sc);
    dlb_status s = !w || !b || !sc ? oom(r->h, "weight scales")
        : r->folded_weights(r->h, r->m, i, w, wn, b, oc);
    for (uint32_t k = 0; s == DLB_OK && k < n; k++) {
        size_t from = r->qs->per_channel ? k * per : 0;
        size_t to = r->qs->per_channel ? from + per : wn;
        double a = 0.0;
        for (size_t j = from; j < to; j++)
            a = fabs(w[j]) > a ? fabs(w[j]) : a;
        sc[k] = a > 0.0 ? (float)(a / 127.0) : 1.0f;
    }
    free(w);
    free(b);
    if (s != DLB_OK) {
        free(sc);
        return s;
    }
    *out = sc;
    *n_out = n;
    return DLB_OK;
}

/* Every node rewritten at once: int8 where calibrated, fp32 elsewhere. */
static dlb_status quantise(struct run *r, struct dlb_quant_summary *sum)
{
    struct dlb_rewrite *rw = calloc(r->nl, sizeof *rw);
    dlb_status s = rw ? DLB_OK : oom(r->h, "layer settings");
    for (unsigned i = 0; s == DLB_OK && i < r->nl; i++) {
        struct dlb_quant_layer *ql = &rw[i].u.quant;
        double lo, hi;
        rw[i].node = i;
        rw[i].kind = DLB_REWRITE_INT8;
        ql->act_type = DLB_F32;
        if (!r->p[i].quant)
            continue;
        qc_range(&r->p[i].st, r->qs->method, r->qs->percentile, !r->qs->u8,
                 &lo, &hi);
        ql->act_type = r->qs->u8 ? DLB_U8 : DLB_S8;
        qc_params(lo, hi, r->qs->u8, &ql->act_scale, &ql->act_zero_point);
        r->h->log(r->h, DLB_LOG_INFO, "%s: input [%g, %g] seen, [%g, %g] "
                  "kept: scale %g, zero point %d", r->p[i].info.name,
                  r->p[i].st.min, r->p[i].st.max, lo, hi,
                  (double)ql->act_scale, (int)ql->act_zero_point);
        s = weight_scales(r, i, (float **)&ql->w_scale, &ql->n_w_scale);
    }
    if (s == DLB_OK)
        s = r->api->rewrite(r->h, r->m, rw, r->nl, sum);
    for (unsigned i = 0; rw && i < r->nl; i++)
        free((void *)rw[i].u.quant.w_scale);
    free(rw);
    return s;
}

/* SQNR of each int8 layer's output: at the next observation point (the
 * next conv or linear layer's input, or the model's output), where the
 * int8 model hands on what that layer and the ones it absorbed made. */
static void record_sqnr(struct run *r)
{
    for (unsigned i = 0; i < r->nl; i++) {
        if (!r->p[i].quant)
            continue;
        unsigned j = i + 1;
        while (j < r->nl && !r->p[j].quant)
            j++;
        const struct point *p = &r->p[j];
        char name[96];
        double db = p->noise > 0.0 ? 10.0 * log10(p->signal / p->noise)
                                   : 300.0; /* identical: no noise at all */
        snprintf(name, sizeof name, "sqnr_%s", r->p[i].info.name);
        r->h->metric(r->h, name, "dB", db);
    }
}

static void record_summary(const struct dlb_host *h,
                           const struct dlb_quant_summary *sum)
{
    h->metric(h, "int8_layers", "count", sum->int8_layers);
    h->metric(h, "int8_outputs", "count", sum->int8_outputs);
    h->metric(h, "folded_batchnorms", "count", sum->folded);
    h->metric(h, "input_quantize", "count", sum->input_quantize);
    h->metric(h, "model_bytes_fp32", "bytes", (double)sum->fp32_bytes);
    h->metric(h, "model_bytes_int8", "bytes", (double)sum->int8_bytes);
    if (sum->fp32_bytes)
        h->metric(h, "size_ratio", "",
                  (double)sum->int8_bytes / (double)sum->fp32_bytes);
}

static dlb_status layers_of(struct run *r)
{
    r->nl = r->api->node_count(r->h, r->m);
    r->p = calloc(r->nl + 1, sizeof *r->p);
    if (!r->p)
        return oom(r->h, "calibration statistics");
    for (unsigned i = 0; i <= r->nl; i++)
        qc_stats_init(&r->p[i].st);
    for (unsigned i = 0; i < r->nl; i++) {
        dlb_status s = r->api->node_info(r->h, r->m, i, &r->p[i].info);
        if (s != DLB_OK)
            return s;
        r->p[i].quant = r->p[i].info.kind == DLB_LAYER_CONV ||
                        r->p[i].info.kind == DLB_LAYER_LINEAR;
    }
    return DLB_OK;
}

dlb_status quant_run(const struct quant_settings *qs, const struct dlb_host *h,
                     struct dlb_model *m)
{
    const struct dlb_model_api *api = h->model_api;
    struct run r = {
        .qs = qs, .h = h, .api = api, .m = m,
        .observe = (dlb_extra_quant_observe)api->extra(h, "quant.observe"),
        .folded_weights = (dlb_extra_quant_folded_weights)api->extra(
            h, "quant.folded_weights")};
    const struct dlb_rewrite fp32 = {.kind = DLB_REWRITE_FP32};
    struct dlb_quant_summary sum;
    double loss, acc_fp32 = 0.0, acc_int8 = 0.0;
    /* Speed only (a search's screening): calibration and the int8 layers
     * make the speed; the two accuracy evaluations, which cost vgg-small
     * several times its calibration, and the SQNR pass serve the quality
     * figures alone. */
    int quality = !(DLB_HOST_HAS(h, measure_only) && h->measure_only);
    if (!r.observe || !r.folded_weights || !m)
        return DLB_ERR_UNSUPPORTED;
    dlb_status s = api->rewrite(h, m, &fp32, 1, NULL);
    if (s == DLB_OK)
        s = layers_of(&r);
    if (s == DLB_OK && quality)
        s = api->evaluate(h, m, &loss, &acc_fp32);
    double t0 = h->now(h);
    if (s == DLB_OK)
        s = calibrate(&r);
    if (s == DLB_OK)
        s = quantise(&r, &sum);
    double t1 = h->now(h);
    if (s == DLB_OK && quality) {
        r.pass = PASS_SQNR;
        s = r.observe(h, m, r.sqnr_images, r.sqnr_n, observer, &r);
    }
    if (s == DLB_OK && quality)
        s = api->evaluate(h, m, &loss, &acc_int8);
    if (s == DLB_OK) {
        h->metric(h, "calib_time_s", "s", t1 - t0);
        record_summary(h, &sum);
    }
    if (s == DLB_OK && quality) {
        h->metric(h, "accuracy_fp32", "%", acc_fp32);
        h->metric(h, "accuracy_int8", "%", acc_int8);
        h->metric(h, "accuracy_drop", "points", acc_fp32 - acc_int8);
        record_sqnr(&r);
    } else if (s == DLB_OK) {
        h->log(h, DLB_LOG_INFO, "measure_only: the accuracy evaluations and "
               "the SQNR pass skipped");
    }
    for (unsigned i = 0; r.p && i <= r.nl; i++) {
        qc_stats_free(&r.p[i].st);
        free(r.p[i].ref);
    }
    free(r.p);
    free(r.sqnr_images);
    return s;
}
