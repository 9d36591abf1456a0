/* Fitting a data set to the input a model takes: the shapes agree, the
 * images are zero-padded to the model's height and width, or the pair is
 * refused with both shapes named. */
#include "data/dataset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Padding is for a border (Fashion-MNIST's 28x28 in a 32x32 network), not
 * for a thumbnail in a frame: an image must cover at least 3/4 of the
 * model's height and of its width. */
#define FIT_PAD_MIN_NUM 3u
#define FIT_PAD_MIN_DEN 4u

static int fit_pad_ok(uint32_t have, uint32_t want)
{
    return (uint64_t)have * FIT_PAD_MIN_DEN >= (uint64_t)want * FIT_PAD_MIN_NUM;
}

dlb_status dlb_dataset_fit(const struct dlb_dataset *d,
                           const struct dlb_data_want *want, int *pad,
                           struct dlb_error *err)
{
    *pad = 0;
    if (!want || (!want->c && !want->h && !want->w))
        return DLB_OK;
    int same = d->c == want->c && d->h == want->h && d->w == want->w;
    int smaller = d->c == want->c && d->h <= want->h && d->w <= want->w &&
                  fit_pad_ok(d->h, want->h) && fit_pad_ok(d->w, want->w);
    if ((same || smaller) && d->classes <= want->classes) {
        *pad = !same;
        return DLB_OK;
    }
    const char *hint = d->c != want->c
        ? " (the channels must agree)"
        : d->h > want->h || d->w > want->w
        ? " (images larger than the model's input are not cropped)"
        : d->classes > want->classes
        ? ""
        : " (smaller images are zero-padded only when they cover at least "
          "3/4 of the model's height and width)";
    return dlb_errorf(err, DLB_ERR_INPUT, "the model takes %ux%ux%u images in "
                      "%u classes; the data set %s has %u of %ux%ux%u in %u "
                      "classes; fix dataset_path or the model%s", want->c,
                      want->h, want->w, want->classes,
                      d->source ? d->source : "(unnamed)", d->n, d->c, d->h,
                      d->w, d->classes, hint);
}

dlb_status dlb_dataset_pad(struct dlb_dataset *d, uint32_t h, uint32_t w,
                           struct dlb_error *err)
{
    if (h < d->h || w < d->w)
        return dlb_errorf(err, DLB_ERR_INTERNAL, "padding %ux%u images to "
                          "%ux%u", d->h, d->w, h, w);
    if (h == d->h && w == d->w)
        return DLB_OK;
    size_t planes = (size_t)d->n * d->c;
    uint8_t *img = calloc(planes ? planes : 1, (size_t)h * w);
    if (!img)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory padding %u images "
                          "to %ux%u", d->n, h, w);
    uint32_t top = (h - d->h) / 2, left = (w - d->w) / 2;
    for (size_t p = 0; p < planes; p++) {
        const uint8_t *src = d->images + p * d->h * d->w;
        uint8_t *dst = img + p * h * w + (size_t)top * w + left;
        for (uint32_t y = 0; y < d->h; y++)
            memcpy(dst + (size_t)y * w, src + (size_t)y * d->w, d->w);
    }
    free(d->images);
    d->images = img;
    if (!d->padded_from_h) {
        d->padded_from_h = d->h;
        d->padded_from_w = d->w;
    }
    d->h = h;
    d->w = w;
    return DLB_OK;
}
