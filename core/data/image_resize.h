/* Fitting a decoded image to a model's input: scaled (bilinear) so that it
 * covers the input, cropped to it (centred, or at a random offset for
 * training), mirrored when asked, normalised into float planes. */
#ifndef DLB_CORE_DATA_IMAGE_RESIZE_H
#define DLB_CORE_DATA_IMAGE_RESIZE_H

#include <stdint.h>

#include "data/image_decode.h"

/* Training crops come from the image scaled to this much more than the
 * input (8/7: ImageNet's 256 for 224; 36 for 32), at a random offset. */
#define DLB_CROP_MARGIN_NUM 8u
#define DLB_CROP_MARGIN_DEN 7u

/* Where the h x w window lies in the image scaled to rh x rw. */
struct dlb_crop {
    uint32_t rh, rw;     /* the scaled image */
    uint32_t top, left;  /* the window's corner in it */
    uint32_t h, w;       /* the window: the model's input */
    int flip;            /* mirrored left-right */
};

/* The crop of a src_h x src_w image for an h x w input. Without `random`,
 * the image is scaled (aspect kept) so that it just covers the input and
 * the window is its centre: an image of the input's size is taken as it
 * is. With `random`, it is scaled by a further DLB_CROP_MARGIN and the
 * window's offsets and the mirror come from `draw` (uniform bits). */
void dlb_crop_plan(uint32_t src_h, uint32_t src_w, uint32_t h, uint32_t w,
                   int random, uint64_t draw, struct dlb_crop *out);

/* The window of `cr` from `im` as im->c planes of cr->h x cr->w floats,
 * (v/255 - mean)/std for the bilinearly interpolated value v (pixel
 * centres aligned: scaled pixel X samples the source at
 * (X + 0.5) * src / scaled - 0.5, clamped to the edge). DLB_ERR_NOMEM
 * is the only failure. */
dlb_status dlb_image_crop(const struct dlb_image *im, const struct dlb_crop *cr,
                          float mean, float std, float *out);

#endif
