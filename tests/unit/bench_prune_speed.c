/* Inference speed of a network with a fraction of its filters removed,
 * against the same network dense, in one process with the two timed in
 * turns, so that load from elsewhere on a shared machine hits both alike:
 *   bench_prune_speed [MODEL [BATCH [FRACTION [PAIRS [BACKEND [THREADS]]]]]]
 * (defaults vgg-small, 256, 0.5, 15, cpu, 0 = all cores; MODEL names
 * suites/models/MODEL.ini under $srcdir, default "."). Every conv and
 * linear layer that feeds another loses the filters of smallest L1 norm,
 * as the prune plugin's filters_l1 does (on freshly initialised weights:
 * the shapes, not the values, set the speed). Prints the median step time
 * of each and the median of the per-pair ratios. Built by `make bench`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "model/model.h"
#include "model/model_prune.h"
#include "util/rng.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Keep the units of largest L1 norm of every conv or linear layer whose
 * output reaches another one. */
static dlb_status remove_filters(struct dlb_model *m, double fraction,
                                 struct dlb_error *err)
{
    const struct dlb_model_spec *sp = dlb_model_spec_of(m);
    struct dlb_prune_keep keep[64];
    unsigned n = 0;
    for (unsigned i = 0; i < sp->n_layers && n < 64; i++) {
        const struct dlb_layer_spec *L = &sp->layers[i];
        if ((L->kind != DLB_LAYER_CONV && L->kind != DLB_LAYER_LINEAR) ||
            i + 2 >= sp->n_layers) /* the last linear gives the scores */
            continue;
        struct dlb_layer_info li;
        dlb_model_layer_info(m, i, &li);
        float *w = malloc(li.weight_count * sizeof *w);
        double *norm = malloc(L->out_c * sizeof *norm);
        uint32_t *list = malloc(L->out_c * sizeof *list), kept = 0;
        dlb_model_tensor_io(m, li.weight, w, li.weight_count, 0, err);
        size_t per = li.weight_count / L->out_c;
        for (uint32_t u = 0; u < L->out_c; u++) {
            norm[u] = 0;
            for (size_t k = 0; k < per; k++)
                norm[u] += fabs(w[u * per + k]);
        }
        uint32_t drop = (uint32_t)lround(fraction * L->out_c);
        for (uint32_t u = 0; u < L->out_c; u++) {
            uint32_t below = 0; /* units ranked before u */
            for (uint32_t v = 0; v < L->out_c; v++)
                below += norm[v] < norm[u] || (norm[v] == norm[u] && v < u);
            if (below >= drop)
                list[kept++] = u;
        }
        keep[n++] = (struct dlb_prune_keep){i, list, kept};
        free(w);
        free(norm);
    }
    dlb_status s = dlb_model_prune_remove(m, keep, n, err);
    for (unsigned k = 0; k < n; k++)
        free((void *)keep[k].keep);
    return s;
}

static double step(struct dlb_model *m, const float *img, uint32_t batch,
                   float *out)
{
    struct dlb_error err = {""};
    double t0 = now_s();
    if (dlb_model_infer(m, img, batch, out, &err) != DLB_OK) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    return now_s() - t0;
}

int main(int argc, char **argv)
{
    const char *model = argc > 1 ? argv[1] : "vgg-small";
    uint32_t batch = argc > 2 ? (uint32_t)atoi(argv[2]) : 256;
    double fraction = argc > 3 ? atof(argv[3]) : 0.5;
    int pairs = argc > 4 ? atoi(argv[4]) : 15;
    const char *backend = argc > 5 ? argv[5] : "cpu";
    struct dlb_backend_config cfg = {.threads = argc > 6 ? atoi(argv[6]) : 0};
    const char *srcdir = getenv("srcdir") ? getenv("srcdir") : ".";
    char path[1024], why[256];
    struct dlb_error err = {""};
    struct dlb_model_spec *sp = NULL;
    struct dlb_backend *be = NULL;
    struct dlb_model *dense = NULL, *pruned = NULL;
    snprintf(path, sizeof path, "%s/suites/models/%s.ini", srcdir, model);
    if (pairs < 1 || dlb_model_file_load(path, &sp, &err) != DLB_OK ||
        dlb_backend_open(backend, &cfg, &be, why, sizeof why) != DLB_OK ||
        dlb_model_create(sp, be, DLB_F32, 1, &dense, &err) != DLB_OK ||
        dlb_model_create(sp, be, DLB_F32, 1, &pruned, &err) != DLB_OK ||
        remove_filters(pruned, fraction, &err) != DLB_OK) {
        fprintf(stderr, "bench_prune_speed: %s%s\n", err.msg, why);
        return 1;
    }
    size_t per = (size_t)sp->in_c * sp->in_h * sp->in_w;
    float *img = malloc(batch * per * sizeof *img);
    float *out = malloc((size_t)batch * sp->classes * sizeof *out);
    struct dlb_rng r;
    dlb_rng_seed(&r, 2);
    for (size_t k = 0; k < batch * per; k++)
        img[k] = (float)dlb_rng_normal(&r);
    double *td = malloc(pairs * sizeof *td), *tp = malloc(pairs * sizeof *tp);
    double *ratio = malloc(pairs * sizeof *ratio);
    for (int k = 0; k < 3; k++) { /* warm-up: primitives, pages */
        step(dense, img, batch, out);
        step(pruned, img, batch, out);
    }
    for (int k = 0; k < pairs; k++) {
        td[k] = step(dense, img, batch, out);
        tp[k] = step(pruned, img, batch, out);
        ratio[k] = td[k] / tp[k];
    }
    const struct dlb_model_spec *ps = dlb_model_spec_of(pruned);
    double md = median(td, pairs), mp = median(tp, pairs);
    double mr = median(ratio, pairs); /* sorts: ratio[0] is the least */
    printf("%s batch %u, %.0f%% of filters removed: %.1f -> %.1f MFLOP, "
           "%llu -> %llu parameters\n", model, batch, 100 * fraction,
           sp->flops_fwd * 1e-6, ps->flops_fwd * 1e-6,
           (unsigned long long)sp->params, (unsigned long long)ps->params);
    printf("dense %.2f ms (%.0f images/s), pruned %.2f ms (%.0f images/s), "
           "speedup %.2fx (median of %d pairs; ratios %.2f to %.2f)\n",
           1e3 * md, batch / md, 1e3 * mp, batch / mp, mr, pairs, ratio[0],
           ratio[pairs - 1]);
    free(img);
    free(out);
    free(td);
    free(tp);
    free(ratio);
    dlb_model_destroy(dense);
    dlb_model_destroy(pruned);
    dlb_model_spec_free(sp);
    dlb_backend_close(be);
    return 0;
}
