/* Turning uint8 images into normalised float batches, with the training
 * augmentation (random horizontal flip, random crop with padding 2), and
 * the seeded orders in which a training run visits the data. */
#ifndef DLB_CORE_DATA_AUGMENT_H
#define DLB_CORE_DATA_AUGMENT_H

#include <stdint.h>

#include "data/dataset.h"
#include "util/rng.h"

/* Padding of the random crop, in pixels on each side. */
#define DLB_AUGMENT_PAD 2

/* lut[v] = (v/255 - d->mean) / d->std, rounded once from double. */
void dlb_norm_lut(const struct dlb_dataset *d, float lut[256]);

/* One image of c x h x w bytes into c x h x w floats through `lut`,
 * mirrored left-right when `flip`, and shifted so that
 * out[y][x] = src[y - dy][x - dx] (before the mirror), where
 * |dx|, |dy| <= DLB_AUGMENT_PAD. Pixels shifted in from outside take
 * lut[0]: the padding is black (intensity 0) before normalisation, as in
 * the usual pad-then-normalise pipeline, not 0.0 after it. */
void dlb_augment_image(const uint8_t *src, uint32_t c, uint32_t h, uint32_t w,
                       const float lut[256], int flip, int dx, int dy,
                       float *out);

/* Fill a batch from the images d->images[indices[i]], i < n: NCHW floats in
 * images_out (n x c x h x w), labels in labels_out (may be NULL). With
 * `augment`, each image is flipped with probability 1/2 and cropped at a
 * uniform offset in [-2, 2]^2, drawn from `rng` (one draw per image, in
 * order, so one seed gives one batch); without it `rng` may be NULL.
 * An image folder's images (d->folder) are decoded, scaled and cropped to
 * the data's shape instead (folder.h), at a random crop and mirror under
 * `augment`. Returns DLB_ERR_INTERNAL when an index is out of range: a
 * caller bug; for a folder, DLB_ERR_INPUT when no file decodes. */
dlb_status dlb_batch_fill(const struct dlb_dataset *d, const uint32_t *indices,
                          uint32_t n, int augment, struct dlb_rng *rng,
                          float *images_out, int32_t *labels_out);

/* dlb_batch_fill with the images shared out over the calling thread's
 * OpenMP threads (the backend's), with the same result: for a fill inside
 * the step, whose threads wait meanwhile (on one thread it took a tenth
 * of a LeNet training step at batch 256). Not for threads of their own
 * (a loader's workers): each would start a team beside the step's. */
dlb_status dlb_batch_fill_par(const struct dlb_dataset *d,
                              const uint32_t *indices, uint32_t n, int augment,
                              struct dlb_rng *rng, float *images_out,
                              int32_t *labels_out);

/* Shuffle idx in place (Fisher-Yates, unbiased through dlb_rng_below). */
void dlb_shuffle(uint32_t *idx, uint32_t n, struct dlb_rng *rng);

/* The visiting order of epoch `epoch`: 0..n-1, shuffled when `shuffle` by a
 * stream that depends on (seed, epoch) only, so that any loader (the
 * baseline or a plugin, any number of workers) visits the same order. */
void dlb_epoch_order(uint32_t *idx, uint32_t n, uint64_t seed, uint64_t epoch,
                     int shuffle);

#endif
