/* Batch filling: on the hot path of every training step, so the pixel loops
 * are table look-ups with no per-pixel branches. A crop only decides, per
 * row, which span of the output comes from the image and which is padding. */
#include "data/augment.h"

#include <stddef.h>
#include <stdlib.h>

#include "data/folder.h"

/* Stream id of the epoch orders, distinct from the small ids other modules
 * use with the same seed. */
#define AUGMENT_ORDER_STREAM 0x4f524445520000ull

void dlb_norm_lut(const struct dlb_dataset *d, float lut[256])
{
    for (int v = 0; v < 256; v++)
        lut[v] = (float)((v / 255.0 - (double)d->mean) / (double)d->std);
}

static inline int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void dlb_augment_image(const uint8_t *src, uint32_t c, uint32_t h, uint32_t w,
                       const float lut[256], int flip, int dx, int dy,
                       float *out)
{
    const float pad = lut[0];
    const int W = (int)w, H = (int)h;
    /* Output columns [x0, x1) read the image; the rest are padding. Without
     * the mirror, out[x] = row[x - dx]; with it, out[x] = row[W-1-x - dx]. */
    const int x0 = flip ? clampi(-dx, 0, W) : clampi(dx, 0, W);
    const int x1 = flip ? clampi(W - dx, 0, W) : clampi(W + dx, 0, W);

    for (uint32_t ch = 0; ch < c; ch++) {
        const uint8_t *plane = src + (size_t)ch * h * w;
        float *o = out + (size_t)ch * h * w;
        for (int y = 0; y < H; y++, o += W) {
            int sy = y - dy;
            if (sy < 0 || sy >= H) {
                for (int x = 0; x < W; x++)
                    o[x] = pad;
                continue;
            }
            const uint8_t *row = plane + (size_t)sy * w;
            for (int x = 0; x < x0; x++)
                o[x] = pad;
            if (flip) {
                const int last = W - 1 - dx;
                for (int x = x0; x < x1; x++)
                    o[x] = lut[row[last - x]];
            } else {
                for (int x = x0; x < x1; x++)
                    o[x] = lut[row[x - dx]];
            }
            for (int x = x1; x < W; x++)
                o[x] = pad;
        }
    }
}

/* Images per parallel share: below about a LeNet batch of 64 the fork
 * and join cost more than the copies. */
#define FILL_PAR_PIXELS 65536

/* An image folder's batch: each image decoded, scaled and cropped
 * (folder.h). One 64-bit draw per image, in order, decides its crop and
 * mirror, so the result is the same however the images are shared out. */
static dlb_status fill_folder(const struct dlb_dataset *d,
                              const uint32_t *indices, uint32_t n, int augment,
                              struct dlb_rng *rng, float *images_out,
                              int32_t *labels_out, int par)
{
    const size_t per = (size_t)d->c * d->h * d->w;
    uint64_t *draw = malloc((size_t)n * sizeof *draw + 1);
    dlb_status st = DLB_OK;
    if (!draw)
        return DLB_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++)
        draw[i] = augment ? dlb_rng_u64(rng) : 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) if (par && n > 1)
#else
    (void)par;
#endif
    for (uint32_t i = 0; i < n; i++) {
        int32_t label = 0;
        dlb_status s = dlb_folder_fill(d, indices[i], augment, draw[i],
                                       images_out + (size_t)i * per, &label);
        if (labels_out)
            labels_out[i] = label;
        if (s != DLB_OK) {
#ifdef _OPENMP
#pragma omp critical(dlb_fill_folder_status)
#endif
            st = s;
        }
    }
    free(draw);
    return st;
}

static dlb_status fill(const struct dlb_dataset *d, const uint32_t *indices,
                       uint32_t n, int augment, struct dlb_rng *rng,
                       float *images_out, int32_t *labels_out, int par)
{
    const size_t per = (size_t)d->c * d->h * d->w;
    const int side = 2 * DLB_AUGMENT_PAD + 1;
    float lut[256];
    int *draw = NULL;

    for (uint32_t i = 0; i < n; i++)
        if (indices[i] >= d->n)
            return DLB_ERR_INTERNAL;
    if (d->folder)
        return fill_folder(d, indices, n, augment, rng, images_out, labels_out,
                           par);
    /* The draws in image order first (one decides flip and both offsets:
     * 2 x 5 x 5 outcomes), so that the images can be filled in parallel
     * with the same result. */
    if (augment) {
        draw = malloc((size_t)n * sizeof *draw + 1);
        if (!draw)
            return DLB_ERR_NOMEM;
        for (uint32_t i = 0; i < n; i++)
            draw[i] = (int)dlb_rng_below(rng, (uint64_t)(2 * side * side));
    }
    dlb_norm_lut(d, lut);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) \
    if (par && (size_t)n * per >= FILL_PAR_PIXELS)
#else
    (void)par;
#endif
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = indices[i];
        const uint8_t *src = d->images + (size_t)k * per;
        float *out = images_out + (size_t)i * per;
        if (labels_out)
            labels_out[i] = d->labels[k];
        if (!augment) {
            for (size_t p = 0; p < per; p++)
                out[p] = lut[src[p]];
            continue;
        }
        int flip = draw[i] & 1;
        int off = draw[i] >> 1;
        dlb_augment_image(src, d->c, d->h, d->w, lut, flip,
                          off % side - DLB_AUGMENT_PAD,
                          off / side - DLB_AUGMENT_PAD, out);
    }
    free(draw);
    return DLB_OK;
}

dlb_status dlb_batch_fill(const struct dlb_dataset *d, const uint32_t *indices,
                          uint32_t n, int augment, struct dlb_rng *rng,
                          float *images_out, int32_t *labels_out)
{
    return fill(d, indices, n, augment, rng, images_out, labels_out, 0);
}

dlb_status dlb_batch_fill_par(const struct dlb_dataset *d,
                              const uint32_t *indices, uint32_t n, int augment,
                              struct dlb_rng *rng, float *images_out,
                              int32_t *labels_out)
{
    return fill(d, indices, n, augment, rng, images_out, labels_out, 1);
}

void dlb_shuffle(uint32_t *idx, uint32_t n, struct dlb_rng *rng)
{
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = (uint32_t)dlb_rng_below(rng, i);
        uint32_t t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
}

void dlb_epoch_order(uint32_t *idx, uint32_t n, uint64_t seed, uint64_t epoch,
                     int shuffle)
{
    for (uint32_t i = 0; i < n; i++)
        idx[i] = i;
    if (shuffle) {
        struct dlb_rng r;
        dlb_rng_seed_stream(&r, seed, AUGMENT_ORDER_STREAM + epoch);
        dlb_shuffle(idx, n, &r);
    }
}
