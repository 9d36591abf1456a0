/* dlb_crop_plan and dlb_image_crop: the window is sampled straight from the
 * source, never through a scaled copy of the whole image. */
#include "data/image_resize.h"

#include <math.h>
#include <stdlib.h>

/* The scaled side: side * scale rounded, at least `min`. */
static uint32_t scaled(uint32_t side, double scale, uint32_t min)
{
    double v = floor(side * scale + 0.5);
    return v < min ? min : (uint32_t)v;
}

void dlb_crop_plan(uint32_t src_h, uint32_t src_w, uint32_t h, uint32_t w,
                   int random, uint64_t draw, struct dlb_crop *out)
{
    double sy = (double)h / src_h, sx = (double)w / src_w;
    double scale = sy > sx ? sy : sx;
    if (random)
        scale = scale * DLB_CROP_MARGIN_NUM / DLB_CROP_MARGIN_DEN;
    out->rh = scaled(src_h, scale, h);
    out->rw = scaled(src_w, scale, w);
    out->h = h;
    out->w = w;
    if (random) {
        out->flip = (int)(draw & 1);
        out->top = (uint32_t)((draw >> 1) % (out->rh - h + 1));
        out->left = (uint32_t)((draw >> 32) % (out->rw - w + 1));
    } else {
        out->flip = 0;
        out->top = (out->rh - h) / 2;
        out->left = (out->rw - w) / 2;
    }
}

/* Source position of scaled pixel i of n over a side of `src`: the lower
 * neighbour, the upper one and the weight of the upper. */
struct tap {
    uint32_t lo, hi;
    float t;
};

static struct tap tap_of(uint32_t i, uint32_t n, uint32_t src)
{
    double f = (i + 0.5) * src / n - 0.5;
    if (f < 0)
        f = 0;
    if (f > src - 1)
        f = src - 1;
    struct tap t;
    t.lo = (uint32_t)f;
    t.hi = t.lo + 1 < src ? t.lo + 1 : t.lo;
    t.t = (float)(f - t.lo);
    return t;
}

dlb_status dlb_image_crop(const struct dlb_image *im, const struct dlb_crop *cr,
                          float mean, float std, float *out)
{
    const uint32_t c = im->c, W = cr->w;
    const float a = 1.0f / (255.0f * std), b = -mean / std;
    struct tap *xs = malloc((W ? W : 1) * sizeof *xs);
    if (!xs)
        return DLB_ERR_NOMEM;
    for (uint32_t x = 0; x < W; x++) {
        uint32_t X = cr->left + (cr->flip ? W - 1 - x : x);
        xs[x] = tap_of(X, cr->rw, im->w);
    }
    for (uint32_t y = 0; y < cr->h; y++) {
        struct tap ty = tap_of(cr->top + y, cr->rh, im->h);
        const uint8_t *r0 = im->px + (size_t)ty.lo * im->w * c;
        const uint8_t *r1 = im->px + (size_t)ty.hi * im->w * c;
        for (uint32_t ch = 0; ch < c; ch++) {
            float *o = out + ((size_t)ch * cr->h + y) * W;
            for (uint32_t x = 0; x < W; x++) {
                const struct tap *tx = &xs[x];
                float top = r0[tx->lo * c + ch] +
                            tx->t * (r0[tx->hi * c + ch] - r0[tx->lo * c + ch]);
                float bot = r1[tx->lo * c + ch] +
                            tx->t * (r1[tx->hi * c + ch] - r1[tx->lo * c + ch]);
                o[x] = (top + ty.t * (bot - top)) * a + b;
            }
        }
    }
    free(xs);
    return DLB_OK;
}
