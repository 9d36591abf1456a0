/* Image decoding and fitting: PNG files written by libpng decode to their
 * pixels exactly and JPEG files written by TurboJPEG within JPEG's error,
 * grey and RGB convert into each other, a scaled JPEG decode keeps the
 * size asked for, damaged files are refused with their path; and the
 * bilinear scaling and the crops land where their contract says, on known
 * patterns. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include <unistd.h>

#include "check.h"
#include "data/image_decode.h"
#include "data/image_resize.h"
#include "util/rng.h"

static char tmpdir[256]; /* under the 512-byte paths made from it */

static void path_of(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", tmpdir, name);
}

static void write_png(const char *path, const uint8_t *px, uint32_t w,
                      uint32_t h, uint32_t c)
{
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    im.width = w;
    im.height = h;
    im.format = c == 1 ? PNG_FORMAT_GRAY : c == 3 ? PNG_FORMAT_RGB
                                                  : PNG_FORMAT_RGBA;
    CHECK(png_image_write_to_file(&im, path, 0, px, 0, NULL));
}

static void write_jpeg(const char *path, const uint8_t *px, uint32_t w,
                       uint32_t h, uint32_t c, size_t keep)
{
    tjhandle tj = tjInitCompress();
    unsigned char *jpeg = NULL;
    unsigned long len = 0;
    CHECK(tj != NULL);
    CHECK(tjCompress2(tj, px, (int)w, 0, (int)h, c == 1 ? TJPF_GRAY : TJPF_RGB,
                      &jpeg, &len, c == 1 ? TJSAMP_GRAY : TJSAMP_444, 95,
                      TJFLAG_ACCURATEDCT) == 0);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        size_t n = keep && keep < len ? keep : len;
        CHECK(fwrite(jpeg, 1, n, f) == n);
        CHECK(fclose(f) == 0);
    }
    tjFree(jpeg);
    tjDestroy(tj);
}

/* Random, but smooth enough for JPEG to keep: a random grid of 8x8 cells
 * plus small noise. */
static void pattern(uint8_t *px, uint32_t w, uint32_t h, uint32_t c,
                    uint64_t seed, int smooth)
{
    struct dlb_rng r;
    dlb_rng_seed(&r, seed);
    int cell[64][3];
    for (int k = 0; k < 64; k++)
        for (int j = 0; j < 3; j++)
            cell[k][j] = 20 + (int)dlb_rng_below(&r, 216);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (uint32_t k = 0; k < c; k++) {
                int v = smooth ? cell[(y * 8 / h) * 8 + x * 8 / w][k % 3] +
                                     (int)dlb_rng_below(&r, 9) - 4
                               : (int)dlb_rng_below(&r, 256);
                px[((size_t)y * w + x) * c + k] = (uint8_t)v;
            }
}

static void test_png(void)
{
    char path[512];
    uint8_t px[37 * 29 * 3], rgba[8 * 8 * 4];
    struct dlb_image im;
    struct dlb_error err = {""};

    /* random content, exact: grey and RGB */
    for (uint32_t c = 1; c <= 3; c += 2) {
        pattern(px, 37, 29, c, 10 + c, 0);
        path_of(path, sizeof path, c == 1 ? "g.png" : "rgb.png");
        write_png(path, px, 37, 29, c);
        CHECK(dlb_image_decode(path, c, 0, 0, &im, &err) == DLB_OK);
        CHECK(im.w == 37 && im.h == 29 && im.c == c);
        CHECK(im.px && memcmp(im.px, px, (size_t)37 * 29 * c) == 0);
        dlb_image_free(&im);
    }
    /* grey into 3 channels: replicated */
    pattern(px, 37, 29, 1, 11, 0);
    path_of(path, sizeof path, "g.png");
    CHECK(dlb_image_decode(path, 3, 0, 0, &im, &err) == DLB_OK);
    size_t wrong = 0;
    for (size_t p = 0; p < (size_t)37 * 29; p++)
        for (int k = 0; k < 3; k++)
            wrong += im.px[p * 3 + k] != px[p];
    CHECK(wrong == 0);
    dlb_image_free(&im);
    /* RGB into 1 channel: a grey pixel stays, colours give a luma
     * between their darkest and brightest channel */
    for (int p = 0; p < 64; p++) {
        uint8_t v = (uint8_t)(p * 4), r = (uint8_t)(p & 1 ? 200 : v);
        rgba[p * 4] = r;
        rgba[p * 4 + 1] = v;
        rgba[p * 4 + 2] = v;
        rgba[p * 4 + 3] = 255;
    }
    path_of(path, sizeof path, "rgba.png");
    write_png(path, rgba, 8, 8, 4);
    CHECK(dlb_image_decode(path, 1, 0, 0, &im, &err) == DLB_OK);
    wrong = 0;
    for (int p = 0; p < 64; p++) {
        uint8_t lo = rgba[p * 4 + 1], hi = rgba[p * 4];
        if (lo > hi) {
            uint8_t t = lo;
            lo = hi;
            hi = t;
        }
        wrong += p % 2 == 0 ? im.px[p] > lo + 1 || im.px[p] + 1 < lo
                            : im.px[p] < lo || im.px[p] > hi;
    }
    CHECK(wrong == 0);
    dlb_image_free(&im);
    /* alpha composited onto black */
    memset(rgba, 0, sizeof rgba);
    for (int p = 0; p < 64; p++)
        rgba[p * 4] = rgba[p * 4 + 1] = rgba[p * 4 + 2] = 255;
    write_png(path, rgba, 8, 8, 4);
    CHECK(dlb_image_decode(path, 3, 0, 0, &im, &err) == DLB_OK);
    CHECK(im.px[0] == 0 && im.px[3 * 63 + 2] == 0);
    dlb_image_free(&im);
}

static void test_jpeg(void)
{
    char path[512];
    static uint8_t px[256 * 192 * 3];
    struct dlb_image im;
    struct dlb_error err = {""};

    for (uint32_t c = 1; c <= 3; c += 2) {
        pattern(px, 64, 48, c, 20 + c, 1);
        path_of(path, sizeof path, c == 1 ? "g.jpg" : "rgb.jpg");
        write_jpeg(path, px, 64, 48, c, 0);
        CHECK(dlb_image_decode(path, c, 0, 0, &im, &err) == DLB_OK);
        CHECK(im.w == 64 && im.h == 48 && im.c == c);
        double sum = 0;
        int worst = 0;
        for (size_t p = 0; p < (size_t)64 * 48 * c; p++) {
            int d = abs((int)im.px[p] - (int)px[p]);
            sum += d;
            worst = d > worst ? d : worst;
        }
        /* quality 95, no chroma subsampling: a few levels at most */
        CHECK(sum / (64.0 * 48 * c) < 3.0 && worst <= 24);
        dlb_image_free(&im);
    }
    /* a colour JPEG as grey: close to its luma */
    path_of(path, sizeof path, "rgb.jpg");
    pattern(px, 64, 48, 3, 23, 1);
    CHECK(dlb_image_decode(path, 1, 0, 0, &im, &err) == DLB_OK);
    double sum = 0;
    for (size_t p = 0; p < (size_t)64 * 48; p++)
        sum += fabs(im.px[p] - (0.299 * px[p * 3] + 0.587 * px[p * 3 + 1] +
                                0.114 * px[p * 3 + 2]));
    CHECK(im.c == 1 && sum / (64.0 * 48) < 4.0);
    dlb_image_free(&im);

    /* a scaled decode: the smallest of TurboJPEG's factors that keeps
     * 32x24 (1/8 of 256x192 is 32x24) */
    pattern(px, 256, 192, 3, 30, 1);
    path_of(path, sizeof path, "big.jpg");
    write_jpeg(path, px, 256, 192, 3, 0);
    CHECK(dlb_image_decode(path, 3, 24, 32, &im, &err) == DLB_OK);
    CHECK(im.w == 32 && im.h == 24);
    dlb_image_free(&im);
    CHECK(dlb_image_decode(path, 3, 25, 32, &im, &err) == DLB_OK);
    CHECK(im.w > 32 && im.h >= 25 && im.w <= 64);
    dlb_image_free(&im);
    CHECK(dlb_image_decode(path, 3, 0, 0, &im, &err) == DLB_OK);
    CHECK(im.w == 256 && im.h == 192);
    dlb_image_free(&im);
}

static void test_damaged(void)
{
    char path[512];
    uint8_t px[64 * 64];
    struct dlb_image im;
    struct dlb_error err = {""};

    pattern(px, 64, 64, 1, 40, 1);
    path_of(path, sizeof path, "half.jpg");
    write_jpeg(path, px, 64, 64, 1, 300);
    CHECK(dlb_image_decode(path, 1, 0, 0, &im, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, path) == err.msg && strstr(err.msg, "JPEG"));
    CHECK(im.px == NULL);

    path_of(path, sizeof path, "text.png");
    FILE *f = fopen(path, "wb");
    CHECK(f && fputs("not an image\n", f) >= 0 && fclose(f) == 0);
    CHECK(dlb_image_decode(path, 1, 0, 0, &im, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "neither a PNG nor a JPEG"));

    path_of(path, sizeof path, "missing.png");
    CHECK(dlb_image_decode(path, 1, 0, 0, &im, &err) == DLB_ERR_IO);
    CHECK(strstr(err.msg, "No such file"));
    CHECK(dlb_image_decode(path, 2, 0, 0, &im, &err) == DLB_ERR_INPUT);
}

/* The float a crop gives for byte value v: (v/255 - mean)/std. */
static float norm(double v, float mean, float std)
{
    return (float)((v / 255.0 - mean) / std);
}

static void test_crop(void)
{
    struct dlb_crop cr;
    /* an image of the input's size: taken as it is, exactly */
    uint8_t px[40 * 32 * 3];
    pattern(px, 32, 40, 3, 50, 0);
    struct dlb_image im = {px, 32, 32, 3};
    float out[3 * 32 * 32];
    dlb_crop_plan(32, 32, 32, 32, 0, 0, &cr);
    CHECK(cr.rh == 32 && cr.rw == 32 && cr.top == 0 && cr.left == 0 && !cr.flip);
    CHECK(dlb_image_crop(&im, &cr, 0.3f, 0.25f, out) == DLB_OK);
    double worst = 0;
    for (uint32_t k = 0; k < 3; k++)
        for (uint32_t p = 0; p < 32 * 32; p++)
            worst = fmax(worst, fabs(out[k * 1024 + p] -
                                     norm(px[p * 3 + k], 0.3f, 0.25f)));
    CHECK(worst < 1e-5);

    /* a taller image: the centre rows, unscaled */
    im.h = 40;
    dlb_crop_plan(40, 32, 32, 32, 0, 0, &cr);
    CHECK(cr.rh == 40 && cr.rw == 32 && cr.top == 4 && cr.left == 0);
    CHECK(dlb_image_crop(&im, &cr, 0.0f, 1.0f, out) == DLB_OK);
    worst = 0;
    for (uint32_t y = 0; y < 32; y++)
        for (uint32_t x = 0; x < 32; x++)
            worst = fmax(worst, fabs(out[2048 + y * 32 + x] -
                                     px[((y + 4) * 32 + x) * 3 + 2] / 255.0));
    CHECK(worst < 1e-6);

    /* halving a ramp v = 10x + 3y: pixel centres aligned, each output is
     * the mean of a 2x2 block, 10(2X + 0.5) + 3(2Y + 0.5) */
    uint8_t ramp[16 * 16];
    for (int y = 0; y < 16; y++)
        for (int x = 0; x < 16; x++)
            ramp[y * 16 + x] = (uint8_t)(5 * x + 3 * y);
    struct dlb_image r = {ramp, 16, 16, 1};
    float half[64];
    dlb_crop_plan(16, 16, 8, 8, 0, 0, &cr);
    CHECK(cr.rh == 8 && cr.rw == 8);
    CHECK(dlb_image_crop(&r, &cr, 0.0f, 1.0f / 255.0f, half) == DLB_OK);
    worst = 0;
    for (int Y = 0; Y < 8; Y++)
        for (int X = 0; X < 8; X++)
            worst = fmax(worst, fabs(half[Y * 8 + X] -
                                     (5 * (2 * X + 0.5) + 3 * (2 * Y + 0.5))));
    CHECK(worst < 1e-3);

    /* doubling: interior outputs interpolate between neighbours, edges
     * are clamped */
    float dbl[32 * 32];
    dlb_crop_plan(16, 16, 32, 32, 0, 0, &cr);
    CHECK(dlb_image_crop(&r, &cr, 0.0f, 1.0f / 255.0f, dbl) == DLB_OK);
    CHECK(fabs(dbl[0] - ramp[0]) < 1e-3);
    CHECK(fabs(dbl[5 * 32 + 7] - (5 * 3.25 + 3 * 2.25)) < 1e-3);

    /* random crops: within the 8/7 margin, mirrored by the draw's low bit,
     * the same for the same draw */
    dlb_crop_plan(16, 16, 14, 14, 1, 0x123456789abcdefull, &cr);
    CHECK(cr.rh == 16 && cr.rw == 16 && cr.flip == 1);
    CHECK(cr.top <= 2 && cr.left <= 2);
    struct dlb_crop again;
    dlb_crop_plan(16, 16, 14, 14, 1, 0x123456789abcdefull, &again);
    CHECK(memcmp(&cr, &again, sizeof cr) == 0);
    float m[14 * 14];
    cr.rh = cr.rw = 16; /* unscaled, so the mirror is checkable */
    CHECK(dlb_image_crop(&r, &cr, 0.0f, 1.0f / 255.0f, m) == DLB_OK);
    worst = 0;
    for (uint32_t y = 0; y < 14; y++)
        for (uint32_t x = 0; x < 14; x++)
            worst = fmax(worst, fabs(m[y * 14 + x] -
                                     ramp[(y + cr.top) * 16 + cr.left + 13 - x]));
    CHECK(worst < 1e-3);
    int seen[3][3] = {{0}};
    for (uint64_t d = 0; d < 200; d++) {
        dlb_crop_plan(16, 16, 14, 14, 1, d * 0x9e3779b97f4a7c15ull, &cr);
        if (cr.top <= 2 && cr.left <= 2)
            seen[cr.top][cr.left] = 1;
    }
    int all = 1;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            all &= seen[i][j];
    CHECK(all);
}

static void cleanup(void)
{
    static const char *const names[] = {"g.png", "rgb.png", "rgba.png", "g.jpg",
                                        "rgb.jpg", "big.jpg", "half.jpg",
                                        "text.png"};
    char path[512];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        path_of(path, sizeof path, names[i]);
        unlink(path);
    }
    rmdir(tmpdir);
}

int main(void)
{
    check_temp_template(tmpdir, sizeof tmpdir, "dlb-test-image-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_png();
    test_jpeg();
    test_damaged();
    test_crop();
    cleanup();
    return check_exit();
}
