/* Model size and inference speed through the model interface. */
#include "kd_figures.h"

#include <stdlib.h>

static void size_of(const struct dlb_host *h, const struct dlb_model *m,
                    double *params, double *flops)
{
    const struct dlb_model_api *mo = h->model_api;
    struct dlb_layer_info li;
    *params = *flops = 0.0;
    for (unsigned i = 0, n = mo->node_count(h, m); i < n; i++)
        if (mo->node_info(h, m, i, &li) == DLB_OK) {
            *params += (double)li.params;
            *flops += li.flops_fwd;
        }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Images per second of m's inference at batch n: one pass to warm the
 * backend's primitives up, then passes until min_s has gone by (at least
 * KD_PASSES_MIN, at most KD_PASSES_MAX), from the median pass, which a
 * busy machine disturbs least. The log-probabilities are read back, so
 * the device's work is inside the time. */
#define KD_PASSES_MIN 5
#define KD_PASSES_MAX 64
static dlb_status infer_rate(const struct dlb_host *h, struct dlb_model *m,
                             const float *images, uint32_t n, float *out,
                             double min_s, double *ips)
{
    const struct dlb_model_api *mo = h->model_api;
    double pass[KD_PASSES_MAX], t0, start;
    unsigned k = 0;
    dlb_status s = mo->infer(h, m, images, n, DLB_OUT_LOGPROBS, out);
    *ips = 0.0;
    start = t0 = h->now(h);
    while (s == DLB_OK && k < KD_PASSES_MAX &&
           (k < KD_PASSES_MIN || t0 - start < min_s)) {
        s = mo->infer(h, m, images, n, DLB_OUT_LOGPROBS, out);
        double t1 = h->now(h);
        pass[k++] = t1 - t0;
        t0 = t1;
    }
    if (s != DLB_OK || k == 0)
        return s;
    qsort(pass, k, sizeof pass[0], cmp_double);
    double med = k % 2 ? pass[k / 2] : 0.5 * (pass[k / 2 - 1] + pass[k / 2]);
    if (med > 0)
        *ips = (double)n / med;
    return DLB_OK;
}

/* KD_INFER_BATCH test images (repeated when the set is smaller). */
static dlb_status test_batch(const struct dlb_host *h, float **images)
{
    const struct dlb_dataset *ds = NULL;
    uint32_t n, c, hh, w, classes, idx[KD_INFER_BATCH];
    int32_t labels[KD_INFER_BATCH];
    dlb_status s = h->model_api->dataset(h, 0, &ds);
    *images = NULL;
    if (s != DLB_OK)
        return s;
    h->dataset_shape(h, ds, &n, &c, &hh, &w, &classes);
    if (n == 0)
        return DLB_ERR_INPUT;
    *images = malloc((size_t)KD_INFER_BATCH * c * hh * w * sizeof **images);
    if (!*images)
        return DLB_ERR_NOMEM;
    for (uint32_t i = 0; i < KD_INFER_BATCH; i++)
        idx[i] = i % n;
    return h->batch_fill(h, ds, idx, KD_INFER_BATCH, 0, 0, 0, 0, *images,
                         labels);
}

dlb_status kd_figures_record(const struct dlb_host *h,
                             struct dlb_model *teacher,
                             struct dlb_model *student, uint32_t classes)
{
    double tp, tf, sp, sf, tips = 0.0, sips = 0.0, loss, acc;
    double min_s = h->quick ? 0.05 : 0.5;
    float *images = NULL, *out = NULL;
    dlb_status s = h->model_api->evaluate(h, teacher, &loss, &acc);
    if (s != DLB_OK)
        return s;
    h->metric(h, "teacher_accuracy", "%", acc);
    size_of(h, teacher, &tp, &tf);
    size_of(h, student, &sp, &sf);
    h->metric(h, "teacher_params", "", tp);
    h->metric(h, "student_params", "", sp);
    h->metric(h, "teacher_flops_fwd", "FLOP", tf);
    h->metric(h, "student_flops_fwd", "FLOP", sf);
    s = test_batch(h, &images);
    if (s == DLB_OK &&
        !(out = malloc((size_t)KD_INFER_BATCH * classes * sizeof *out)))
        s = DLB_ERR_NOMEM;
    if (s == DLB_OK)
        s = infer_rate(h, teacher, images, KD_INFER_BATCH, out, min_s, &tips);
    if (s == DLB_OK)
        s = infer_rate(h, student, images, KD_INFER_BATCH, out, min_s, &sips);
    if (s == DLB_OK) {
        h->metric(h, "teacher_infer_ips", "images/s", tips);
        h->metric(h, "student_infer_ips", "images/s", sips);
        if (tips > 0)
            h->metric(h, "infer_speedup", "x", sips / tips);
    }
    free(images);
    free(out);
    return s;
}
