/* The teacher: a second model opened through the model interface with its cached
 * reference weights, and its logits for a training batch, from the cache
 * (kd_cache.h) or computed on the fly. */
#ifndef DLB_PLUGIN_DISTILL_KD_TEACHER_H
#define DLB_PLUGIN_DISTILL_KD_TEACHER_H

#include <dlbench/model_api.h>

#include "kd_cache.h"

struct kd_teacher {
    struct dlb_model *model;
    uint32_t classes;
    size_t per;                        /* floats per image */
    const struct dlb_dataset *train;   /* what the cache covers */
    struct kd_cache *cache;            /* NULL: on the fly */
    /* Scratch for a batch: one image, the missed images and their rows. */
    float *scratch, *miss_images, *miss_logits;
    uint32_t *miss_rows;
    uint32_t cap;
    uint64_t hits, misses;
};

/* Open teacher `name` (reference weights of `steps` steps, 0: the
 * harness' default) and check that it takes the student's images and
 * classes. On failure `why` says what is wrong. */
dlb_status kd_teacher_open(struct kd_teacher *t, const struct dlb_host *h,
                           const char *name, uint64_t steps,
                           struct dlb_model *student, char *why, size_t len);

/* Compute the logits of every training image (no augmentation), in
 * chunks of `chunk` images as the steps would, into a new cache. */
dlb_status kd_teacher_build_cache(struct kd_teacher *t,
                                  const struct dlb_host *h, uint32_t chunk);

/* The teacher's logits for `b` into out [n][classes]: cached rows where
 * the images are found, the rest computed in one pass. */
dlb_status kd_teacher_logits(struct kd_teacher *t, const struct dlb_host *h,
                             const struct dlb_batch *b, float *out);

void kd_teacher_close(struct kd_teacher *t, const struct dlb_host *h);

#endif
