/* What the whole-model tests share: a model file from the source tree, a
 * model on a backend, random batches, and the gradient check of every
 * learnable tensor against central differences of the loss (fp64 on the
 * ref backend: |analytic - numeric| <= 1e-5 * max(|a|, |n|) + 1e-8 with
 * h = 1e-6, truncation ~1e-12 and rounding ~1e-10). Include check.h
 * first. */
#ifndef DLB_TEST_MODEL_FIXTURE_H
#define DLB_TEST_MODEL_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/backend.h"
#include "model/model.h"
#include "util/rng.h"

static inline struct dlb_model_spec *fx_load_spec(const char *rel)
{
    const char *srcdir = getenv("srcdir");
    char path[1024];
    struct dlb_model_spec *s = NULL;
    struct dlb_error err = {""};
    snprintf(path, sizeof path, "%s/%s", srcdir && *srcdir ? srcdir : ".", rel);
    if (dlb_model_file_load(path, &s, &err) != DLB_OK)
        fprintf(stderr, "%s\n", err.msg);
    CHECK(s != NULL);
    return s;
}

static inline struct dlb_model *fx_make(const struct dlb_model_spec *s,
                                        struct dlb_backend *be,
                                        enum dlb_dtype t, uint64_t seed)
{
    struct dlb_model *m = NULL;
    struct dlb_error err = {""};
    if (dlb_model_create(s, be, t, seed, &m, &err) != DLB_OK)
        fprintf(stderr, "%s\n", err.msg);
    CHECK(m != NULL);
    return m;
}

/* Random normalised-looking images and labels. */
static inline void fx_random_batch(const struct dlb_model_spec *s, uint32_t n,
                                   uint64_t seed, float *img, int32_t *lab)
{
    struct dlb_rng r;
    size_t per = (size_t)s->in_c * s->in_h * s->in_w;
    dlb_rng_seed(&r, seed);
    for (size_t i = 0; i < n * per; i++)
        img[i] = (float)dlb_rng_normal(&r);
    for (uint32_t i = 0; i < n; i++)
        lab[i] = (int32_t)dlb_rng_below(&r, s->classes);
}

static inline double fx_loss_of(struct dlb_model *m, const float *img,
                                const int32_t *lab, uint32_t n)
{
    struct dlb_error err = {""};
    double loss = NAN;
    if (dlb_model_forward_backward(m, img, lab, n, 1.0f, &loss, &err) != DLB_OK)
        fprintf(stderr, "%s\n", err.msg);
    return loss;
}

/* `picks` random elements of every `stride`-th learnable tensor of fp64
 * model m on backend be (from the first: a deep network's tensors spread
 * over its depth), the batch's gradients against central differences of
 * step h, within rtol relative, and absolutely within 1e-14 / h (1e-8 at
 * h = 1e-6: the difference's rounding, ~1e-16 of the loss over h). */
static inline void fx_check_gradients_every(struct dlb_backend *be,
                                            struct dlb_model *m,
                                            const float *img,
                                            const int32_t *lab, uint32_t n,
                                            int picks, uint64_t seed,
                                            size_t stride, double h,
                                            double rtol)
{
    struct dlb_rng pick;
    size_t learnable = 0;
    dlb_rng_seed(&pick, seed);
    fx_loss_of(m, img, lab, n);
    for (size_t t = 0; m && t < dlb_model_n_tensors(m); t++) {
        const struct dlb_model_tensor *mt = dlb_model_tensor_at(m, t);
        struct dlb_buffer *val, *grad;
        CHECK(dlb_model_find(m, mt->name, &val, &grad, NULL) == DLB_OK);
        if (!grad)
            continue; /* running statistics are not learned */
        if (learnable++ % stride)
            continue;
        double *w = malloc(mt->count * 8), *g = malloc(mt->count * 8);
        CHECK(DLB_BE_CALL(be, copy_to_host, g, grad, 0, mt->count * 8) == 0);
        CHECK(DLB_BE_CALL(be, copy_to_host, w, val, 0, mt->count * 8) == 0);
        for (int k = 0; k < picks; k++) {
            size_t i = (size_t)dlb_rng_below(&pick, mt->count);
            double keep = w[i], lp, lm, num;
            w[i] = keep + h;
            DLB_BE_CALL(be, copy_from_host, val, 0, w, mt->count * 8);
            lp = fx_loss_of(m, img, lab, n);
            w[i] = keep - h;
            DLB_BE_CALL(be, copy_from_host, val, 0, w, mt->count * 8);
            lm = fx_loss_of(m, img, lab, n);
            w[i] = keep;
            DLB_BE_CALL(be, copy_from_host, val, 0, w, mt->count * 8);
            num = (lp - lm) / (2 * h);
            double tol = rtol * fmax(fabs(num), fabs(g[i])) + 1e-14 / h;
            if (fabs(num - g[i]) > tol)
                fprintf(stderr, "%s[%zu]: analytic %.10g numeric %.10g\n",
                        mt->name, i, g[i], num);
            CHECK(fabs(num - g[i]) <= tol);
        }
        free(w);
        free(g);
    }
}

/* `picks` random elements of every learnable tensor. */
static inline void fx_check_gradients(struct dlb_backend *be,
                                      struct dlb_model *m, const float *img,
                                      const int32_t *lab, uint32_t n,
                                      int picks, uint64_t seed)
{
    fx_check_gradients_every(be, m, img, lab, n, picks, seed, 1, 1e-6, 1e-5);
}

#endif
