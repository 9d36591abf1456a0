/* The teacher's logits for every training image, looked up by the image
 * itself.
 *
 * A training step hands the executor its batch (normalised floats and
 * labels) but not which images of the data set they are. Without
 * augmentation a batch image is, bit for bit, what the host's batch_fill
 * makes of that data set image, so the cache is keyed by the image's
 * content: a 64-bit hash of its floats finds the candidate index, and the
 * image is compared with the candidate's in full before its logits are
 * used, so a hit is exact whatever the hash does. An augmented image
 * (a random crop or flip) matches nothing and is a miss, which the caller
 * computes on the fly: correct under any setting, fast without
 * augmentation. */
#ifndef DLB_PLUGIN_DISTILL_KD_CACHE_H
#define DLB_PLUGIN_DISTILL_KD_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct kd_cache;

/* Room for n images of `per` floats and their `classes` logits; NULL when
 * out of memory. */
struct kd_cache *kd_cache_create(uint32_t n, uint32_t classes, size_t per);
void kd_cache_free(struct kd_cache *c);

/* Store image `index` (its floats, to hash) and its logits. An image with
 * the hash of one stored before (a duplicate in the data set) leaves the
 * table as it was. */
void kd_cache_put(struct kd_cache *c, uint32_t index, const float *image,
                  const float *logits);

/* Writes the floats of data set image `index` into `out` (per floats);
 * returns 0 on success. */
typedef int (*kd_image_fn)(void *ctx, uint32_t index, float *out);

/* The stored logits of `image`, or NULL when no stored image equals it.
 * `scratch` holds `per` floats for the comparison, made by `load`. */
const float *kd_cache_find(const struct kd_cache *c, const float *image,
                           kd_image_fn load, void *ctx, float *scratch);

/* Bytes the cache holds (logits and table). */
size_t kd_cache_bytes(const struct kd_cache *c);

#endif
