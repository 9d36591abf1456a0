/* make-image-folder: Fashion-MNIST (or, without it, the synthetic stand-in)
 * written out as an image folder for dataset = folder:PATH, in PNG, JPEG or
 * both, at any size and in grey or RGB, with optional corrupt files.
 *
 *   make-image-folder [--idx DIR] [--size N] [--channels 1|3]
 *                     [--format png|jpeg|mixed] [--train N] [--test N]
 *                     [--corrupt N] [--quality Q] OUT
 *
 * OUT/train/CLASS/ and OUT/test/CLASS/ hold the first N images of each class
 * of the training and test splits (--test 0: OUT/CLASS/ only, and dlbench
 * holds out every sixth); CLASS is "0-t-shirt" ... "9-ankle-boot", so that
 * the folder's sorted classes are Fashion-MNIST's labels. Images are scaled
 * from 28x28 with the same bilinear resampling the loader uses; `mixed`
 * alternates PNG and JPEG. --corrupt N adds N undecodable files to the
 * training classes (a truncated JPEG, then a PNG with a broken stream, by
 * turns), named corrupt-K.jpg / corrupt-K.png.
 *
 * The IDX directory defaults to Debian's dataset-fashion-mnist; when it is
 * missing the synthetic set of the same shape is written (and said). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>

#include "data/dataset.h"
#include "data/image_resize.h"

static const char *const class_names[10] = {
    "0-t-shirt", "1-trouser", "2-pullover", "3-dress", "4-coat",
    "5-sandal", "6-shirt", "7-sneaker", "8-bag", "9-ankle-boot"};

struct opts {
    const char *idx, *out, *format;
    unsigned size, channels, train, test, corrupt, quality;
};

static int usage(void)
{
    fprintf(stderr, "usage: make-image-folder [--idx DIR] [--size N] "
            "[--channels 1|3] [--format png|jpeg|mixed] [--train N] "
            "[--test N] [--corrupt N] [--quality Q] OUT\n");
    return 2;
}

static int mkdirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char keep = *p;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "make-image-folder: %s: %s\n", buf, strerror(errno));
            return -1;
        }
        *p = keep;
        if (!keep)
            return 0;
    }
}

static int write_png(const char *path, const uint8_t *px, unsigned side,
                     unsigned c)
{
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    im.width = side;
    im.height = side;
    im.format = c == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
    if (!png_image_write_to_file(&im, path, 0, px, 0, NULL)) {
        fprintf(stderr, "make-image-folder: %s: %s\n", path, im.message);
        return -1;
    }
    return 0;
}

/* The JPEG of px into *jpeg (tjFree it). */
static int encode_jpeg(const uint8_t *px, unsigned side, unsigned c,
                       unsigned quality, unsigned char **jpeg,
                       unsigned long *len)
{
    tjhandle tj = tjInitCompress();
    *jpeg = NULL;
    *len = 0;
    int rc = tj ? tjCompress2(tj, px, (int)side, 0, (int)side,
                              c == 1 ? TJPF_GRAY : TJPF_RGB, jpeg, len,
                              c == 1 ? TJSAMP_GRAY : TJSAMP_444, (int)quality,
                              TJFLAG_ACCURATEDCT)
                : -1;
    if (rc != 0)
        fprintf(stderr, "make-image-folder: TurboJPEG: %s\n", tjGetErrorStr2(tj));
    if (tj)
        tjDestroy(tj);
    return rc;
}

static int write_bytes(const char *path, const void *p, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "make-image-folder: %s: %s\n", path, strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    return 0;
}

static int write_jpeg(const char *path, const uint8_t *px, unsigned side,
                      unsigned c, unsigned quality)
{
    unsigned char *jpeg;
    unsigned long len;
    if (encode_jpeg(px, side, c, quality, &jpeg, &len) != 0)
        return -1;
    int rc = write_bytes(path, jpeg, len);
    tjFree(jpeg);
    return rc;
}

/* Image i of d scaled to side x side, c channels (grey replicated). */
static int scale(const struct dlb_dataset *d, uint32_t i, unsigned side,
                 unsigned c, uint8_t *out)
{
    struct dlb_image im = {d->images + (size_t)i * d->h * d->w, d->w, d->h, 1};
    struct dlb_crop cr;
    float *plane = malloc((size_t)side * side * sizeof *plane);
    if (!plane)
        return -1;
    dlb_crop_plan(d->h, d->w, side, side, 0, 0, &cr);
    /* mean 0, std 1/255: the interpolated byte value itself */
    if (dlb_image_crop(&im, &cr, 0.0f, 1.0f / 255.0f, plane) != DLB_OK) {
        free(plane);
        return -1;
    }
    for (size_t p = 0; p < (size_t)side * side; p++) {
        float v = plane[p] + 0.5f;
        uint8_t b = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        for (unsigned k = 0; k < c; k++)
            out[p * c + k] = b;
    }
    free(plane);
    return 0;
}

/* The first `per_class` images of each class of d into dir/CLASS/. */
static int write_split(const struct opts *o, const struct dlb_dataset *d,
                       const char *dir, unsigned per_class)
{
    unsigned count[10] = {0};
    size_t bytes = (size_t)o->size * o->size * o->channels;
    uint8_t *px = malloc(bytes);
    char path[4096];
    int rc = px ? 0 : -1;
    for (unsigned k = 0; rc == 0 && k < 10; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, class_names[k]);
        rc = mkdirs(path);
    }
    for (uint32_t i = 0; rc == 0 && i < d->n; i++) {
        unsigned k = d->labels[i];
        if (k >= 10 || count[k] >= per_class)
            continue;
        int jpeg = !strcmp(o->format, "jpeg") ||
                   (!strcmp(o->format, "mixed") && (count[k] & 1));
        snprintf(path, sizeof path, "%s/%s/%06u.%s", dir, class_names[k], i,
                 jpeg ? "jpg" : "png");
        rc = scale(d, i, o->size, o->channels, px);
        if (rc == 0)
            rc = jpeg ? write_jpeg(path, px, o->size, o->channels, o->quality)
                      : write_png(path, px, o->size, o->channels);
        count[k]++;
    }
    free(px);
    return rc;
}

/* Undecodable files among the training classes: half a JPEG, and a PNG
 * whose compressed stream is overwritten. */
static int write_corrupt(const struct opts *o, const char *dir)
{
    uint8_t px[64 * 64];
    unsigned char *jpeg;
    unsigned long len;
    char path[4096];
    for (unsigned i = 0; i < sizeof px; i++)
        px[i] = (uint8_t)(i * 7);
    if (encode_jpeg(px, 64, 1, 90, &jpeg, &len) != 0)
        return -1;
    int rc = 0;
    for (unsigned j = 0; rc == 0 && j < o->corrupt; j++) {
        const char *cls = class_names[j % 10];
        if (snprintf(path, sizeof path, "%s/%s/corrupt-%u.%s", dir, cls, j,
                     j % 2 ? "png" : "jpg") >= (int)sizeof path) {
            rc = -1;
        } else if (j % 2 == 0) {
            rc = write_bytes(path, jpeg, len / 2);
        } else {
            rc = write_png(path, px, 64, 1);
            FILE *f = rc == 0 ? fopen(path, "r+b") : NULL;
            static const uint8_t junk[64] = {0xde, 0xad, 0xbe, 0xef};
            /* past the signature and IHDR (33 bytes): into IDAT */
            rc = f && fseek(f, 41, SEEK_SET) == 0 &&
                 fwrite(junk, 1, sizeof junk, f) == sizeof junk && fclose(f) == 0
                     ? 0 : -1;
        }
    }
    tjFree(jpeg);
    return rc;
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){DLB_DATASET_DEFAULT_DIR, NULL, "mixed", 32, 1, 100, 20,
                       0, 95};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        unsigned *num = !strcmp(a, "--size") ? &o->size
                        : !strcmp(a, "--channels") ? &o->channels
                        : !strcmp(a, "--train") ? &o->train
                        : !strcmp(a, "--test") ? &o->test
                        : !strcmp(a, "--corrupt") ? &o->corrupt
                        : !strcmp(a, "--quality") ? &o->quality : NULL;
        if (num && v) {
            *num = (unsigned)strtoul(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--idx") && v) {
            o->idx = argv[++i];
        } else if (!strcmp(a, "--format") && v) {
            o->format = argv[++i];
        } else if (a[0] != '-' && !o->out) {
            o->out = a;
        } else {
            return -1;
        }
    }
    int fmt_ok = !strcmp(o->format, "png") || !strcmp(o->format, "jpeg") ||
                 !strcmp(o->format, "mixed");
    return o->out && fmt_ok && o->size >= 1 && o->size <= 4096 &&
                   (o->channels == 1 || o->channels == 3) && o->quality >= 1 &&
                   o->quality <= 100 ? 0 : -1;
}

static int load(const struct opts *o, int train, struct dlb_dataset *d)
{
    struct dlb_error err = {""};
    if (dlb_dataset_load(o->idx, train, d, &err) == DLB_OK)
        return 0;
    fprintf(stderr, "make-image-folder: %s; writing the synthetic set\n", err.msg);
    return dlb_dataset_synthetic(train ? 60000 : 10000, 42, train, d) == DLB_OK
               ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct opts o;
    struct dlb_dataset tr, te;
    char dir[4096];
    if (parse(argc, argv, &o) != 0)
        return usage();
    if (load(&o, 1, &tr) != 0)
        return 1;
    snprintf(dir, sizeof dir, o.test ? "%s/train" : "%s", o.out);
    int rc = write_split(&o, &tr, dir, o.train);
    if (rc == 0 && o.corrupt)
        rc = write_corrupt(&o, dir);
    dlb_dataset_free(&tr);
    if (rc == 0 && o.test) {
        if (load(&o, 0, &te) != 0)
            return 1;
        snprintf(dir, sizeof dir, "%s/test", o.out);
        rc = write_split(&o, &te, dir, o.test);
        dlb_dataset_free(&te);
    }
    return rc == 0 ? 0 : 1;
}
