/* Decoding one PNG or JPEG file into 8-bit grey or RGB pixels: PNG through
 * libpng's simplified API, JPEG through libjpeg-turbo's TurboJPEG. */
#ifndef DLB_CORE_DATA_IMAGE_DECODE_H
#define DLB_CORE_DATA_IMAGE_DECODE_H

#include <stdint.h>

#include "util/error.h"

/* h x w pixels of c interleaved bytes each (c = 1: grey, 3: RGB), rows top
 * first. */
struct dlb_image {
    uint8_t *px;
    uint32_t w, h, c;
};

/* Decode the file at `path`, PNG or JPEG by its first bytes (not its name),
 * into `c` channels: 1 gives luma (an RGB file converted), 3 gives RGB (a
 * grey file replicated); an alpha channel is composited onto black. A JPEG
 * is decoded at the smallest of TurboJPEG's scaling factors that keeps
 * both sides at least min_h x min_w (0 x 0: full size): the caller resizes
 * anyway, and a scaled decode is cheaper and aliases less. DLB_ERR_IO when
 * the file cannot be read, DLB_ERR_INPUT when it is not a PNG or JPEG this
 * can decode (truncated, corrupt, CMYK ...), each with the path and the
 * decoder's words in err. Thread-safe: every call has its own decoder. */
dlb_status dlb_image_decode(const char *path, uint32_t c, uint32_t min_h,
                            uint32_t min_w, struct dlb_image *out,
                            struct dlb_error *err);

void dlb_image_free(struct dlb_image *im);

#endif
