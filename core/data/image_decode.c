/* dlb_image_decode: the file read whole, then decoded from memory. */
#define _POSIX_C_SOURCE 200809L

#include "data/image_decode.h"

#include <errno.h>
#include <limits.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

/* Larger files are refused rather than read: no picture of a data set is
 * this big, a mistaken path may be. */
#define IMAGE_MAX_FILE (256u << 20)
/* Nor decoded to more pixels than this (a decompression bomb). */
#define IMAGE_MAX_PIXELS (64u << 20)

static dlb_status read_file(const char *path, uint8_t **buf, size_t *len,
                            struct dlb_error *err)
{
    FILE *f = fopen(path, "rb");
    *buf = NULL;
    if (!f)
        return dlb_errorf(err, DLB_ERR_IO, "%s: %s", path, strerror(errno));
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return dlb_errorf(err, DLB_ERR_IO, "%s: cannot read: %s", path,
                          strerror(errno));
    }
    if ((unsigned long)size > IMAGE_MAX_FILE) {
        fclose(f);
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: %ld bytes, over the %u MiB "
                          "an image may have", path, size, IMAGE_MAX_FILE >> 20);
    }
    *buf = malloc(size ? (size_t)size : 1);
    if (!*buf) {
        fclose(f);
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", path);
    }
    *len = fread(*buf, 1, (size_t)size, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || *len != (size_t)size) {
        free(*buf);
        *buf = NULL;
        return dlb_errorf(err, DLB_ERR_IO, "%s: read error", path);
    }
    return DLB_OK;
}

static dlb_status decode_png(const char *path, const uint8_t *buf, size_t len,
                             uint32_t c, struct dlb_image *out,
                             struct dlb_error *err)
{
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&im, buf, len))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: not a PNG libpng can read "
                          "(%s)", path, im.message);
    if ((uint64_t)im.width * im.height > IMAGE_MAX_PIXELS) {
        png_image_free(&im);
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: %ux%u pixels, over the limit",
                          path, im.width, im.height);
    }
    im.format = c == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
    /* zeroed: an alpha channel is composited onto this buffer, black */
    out->px = calloc((size_t)im.width * im.height, c);
    if (!out->px) {
        png_image_free(&im);
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", path);
    }
    if (!png_image_finish_read(&im, NULL, out->px, 0, NULL)) {
        dlb_status s = dlb_errorf(err, DLB_ERR_INPUT, "%s: corrupt PNG (%s)",
                                  path, im.message);
        png_image_free(&im);
        dlb_image_free(out);
        return s;
    }
    out->w = im.width;
    out->h = im.height;
    out->c = c;
    return DLB_OK;
}

/* The smallest scaling factor whose result keeps both sides at least
 * min_h x min_w, or 1/1. */
static tjscalingfactor jpeg_scale(int w, int h, uint32_t min_h, uint32_t min_w)
{
    tjscalingfactor best = {1, 1};
    int n = 0;
    if (!min_h && !min_w)
        return best;
    tjscalingfactor *f = tjGetScalingFactors(&n);
    for (int i = 0; f && i < n; i++) {
        int sw = TJSCALED(w, f[i]), sh = TJSCALED(h, f[i]);
        if (f[i].num <= f[i].denom && /* never upscaled by the decoder */
            (uint32_t)sw >= min_w && (uint32_t)sh >= min_h &&
            (uint64_t)sw * sh < (uint64_t)TJSCALED(w, best) * TJSCALED(h, best))
            best = f[i];
    }
    return best;
}

static dlb_status decode_jpeg(const char *path, const uint8_t *buf, size_t len,
                              uint32_t c, uint32_t min_h, uint32_t min_w,
                              struct dlb_image *out, struct dlb_error *err)
{
    int w = 0, h = 0, sub = 0, space = 0;
    dlb_status s = DLB_OK;
    if (len > ULONG_MAX)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: too large", path);
    tjhandle tj = tjInitDecompress();
    if (!tj)
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: TurboJPEG: %s", path,
                          tjGetErrorStr2(NULL));
    if (tjDecompressHeader3(tj, buf, (unsigned long)len, &w, &h, &sub, &space))
        s = dlb_errorf(err, DLB_ERR_INPUT, "%s: not a JPEG TurboJPEG can read "
                       "(%s)", path, tjGetErrorStr2(tj));
    else if (space == TJCS_CMYK || space == TJCS_YCCK)
        s = dlb_errorf(err, DLB_ERR_INPUT, "%s: a CMYK JPEG; convert it to RGB",
                       path);
    else if (w <= 0 || h <= 0 || (uint64_t)w * h > IMAGE_MAX_PIXELS)
        s = dlb_errorf(err, DLB_ERR_INPUT, "%s: %dx%d pixels, out of range",
                       path, w, h);
    if (s == DLB_OK) {
        tjscalingfactor f = jpeg_scale(w, h, min_h, min_w);
        int sw = TJSCALED(w, f), sh = TJSCALED(h, f);
        out->px = malloc((size_t)sw * sh * c);
        if (!out->px)
            s = dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", path);
        /* A damaged stream may decode with a warning (TJERR_WARNING):
         * libjpeg fills what is missing with grey. That is a corrupt file
         * here too, not an image to train on. */
        else if (tjDecompress2(tj, buf, (unsigned long)len, out->px, sw, 0, sh,
                               c == 1 ? TJPF_GRAY : TJPF_RGB,
                               TJFLAG_STOPONWARNING) != 0) {
            s = dlb_errorf(err, DLB_ERR_INPUT, "%s: corrupt JPEG (%s)", path,
                           tjGetErrorStr2(tj));
            dlb_image_free(out);
        } else {
            out->w = (uint32_t)sw;
            out->h = (uint32_t)sh;
            out->c = c;
        }
    }
    tjDestroy(tj);
    return s;
}

dlb_status dlb_image_decode(const char *path, uint32_t c, uint32_t min_h,
                            uint32_t min_w, struct dlb_image *out,
                            struct dlb_error *err)
{
    static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    uint8_t *buf;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    if (c != 1 && c != 3)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: %u channels: images decode "
                          "to 1 (grey) or 3 (RGB)", path, c);
    dlb_status s = read_file(path, &buf, &len, err);
    if (s != DLB_OK)
        return s;
    if (len >= 8 && memcmp(buf, png_sig, 8) == 0)
        s = decode_png(path, buf, len, c, out, err);
    else if (len >= 3 && buf[0] == 0xff && buf[1] == 0xd8 && buf[2] == 0xff)
        s = decode_jpeg(path, buf, len, c, min_h, min_w, out, err);
    else
        s = dlb_errorf(err, DLB_ERR_INPUT, "%s: neither a PNG nor a JPEG "
                       "(its first bytes say so)", path);
    free(buf);
    return s;
}

void dlb_image_free(struct dlb_image *im)
{
    free(im->px);
    memset(im, 0, sizeof *im);
}
