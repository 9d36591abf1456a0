/* Synthetic stand-in for Fashion-MNIST: its shape or a model's, 10 classes,
 * learnable, deterministic. Every image is generated from its own RNG stream (seed,
 * split, index), so the data depend only on (seed, split) and not on n or
 * on generation order. Integer arithmetic keeps the bytes the same on every
 * machine and compiler. */
#include "data/dataset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/rng.h"

/* The shape the difficulty constants below were tuned at. */
#define SYN_SIDE 28
#define SYN_PIXELS (SYN_SIDE * SYN_SIDE)
#define SYN_GRID 7
#define SYN_CLASSES 10
/* Stream ids, far apart so that splits and prototypes never share one;
 * channel k > 0 of a prototype uses SYN_STREAM_PROTO + (k << 24). */
#define SYN_STREAM_PROTO 0x50524f544full
#define SYN_STREAM_TRAIN (1ull << 40)
#define SYN_STREAM_TEST (2ull << 40)
/* Normalisation constants come from this many training-stream images (of
 * 28x28; fewer of larger images, the same count of pixels, but at least
 * SYN_STATS_MIN), so the train and test sets of one seed share them, as
 * Fashion-MNIST's do. */
#define SYN_STATS_SAMPLE 1024u
#define SYN_STATS_MIN 64u
/* Difficulty: an image is (256 - a)/256 of its class's prototype plus a/256
 * of another class's, a < SYN_BLEND_MAX, shifted by up to SYN_SHIFT pixels
 * (at 28x28; in proportion to the shorter side otherwise), plus triangular
 * noise of standard deviation about 104 * 2/5 = 42. Tuned so that a
 * nearest-class-mean classifier gets most but not all right. */
#define SYN_BLEND_MAX 116u
#define SYN_SHIFT 2
#define SYN_NOISE_NUM 2
#define SYN_NOISE_DEN 5

struct syn_shape {
    uint32_t c, h, w;
    size_t plane, pixels;  /* h * w, c * h * w */
    int shift;
};

/* protos[k * shape.pixels ...]: class k's prototype, c planes. */
struct syn_protos {
    struct syn_shape s;
    uint8_t *p;
};

/* Bilinear sample position of output pixel i (of `side`) on the grid, in
 * eighths of a cell: ((i + 0.5) * 7/side - 0.5) * 8, clamped (2i - 3 at
 * side 28). Integer so that no compiler's choice of floating-point
 * contraction can change a byte. */
static int syn_pos8(uint32_t i, uint32_t side)
{
    long long num = 4LL * SYN_GRID * (2 * (long long)i + 1) - 4LL * side;
    long long u = num < 0 ? 0 : num / side;
    return u > 8 * (SYN_GRID - 1) ? 8 * (SYN_GRID - 1) : (int)u;
}

/* A smooth pattern: a coarse random grid, bilinearly upsampled. Mirror
 * symmetric so that a horizontal flip keeps the class, as it (mostly) does
 * for clothes; a quarter of the cells are dark, like the background of
 * Fashion-MNIST. */
static void syn_plane(uint64_t seed, uint64_t stream, uint32_t h, uint32_t w,
                      uint8_t *out)
{
    struct dlb_rng r;
    int g[SYN_GRID][SYN_GRID];

    dlb_rng_seed_stream(&r, seed, stream);
    for (int i = 0; i < SYN_GRID; i++)
        for (int j = 0; j <= SYN_GRID / 2; j++) {
            int v = dlb_rng_below(&r, 4) == 0
                        ? 0 : 48 + (int)dlb_rng_below(&r, 208);
            g[i][j] = v;
            g[i][SYN_GRID - 1 - j] = v;
        }
    for (uint32_t y = 0; y < h; y++) {
        int u = syn_pos8(y, h), i0 = u >> 3, ty = u & 7;
        int i1 = i0 + 1 < SYN_GRID ? i0 + 1 : i0;
        for (uint32_t x = 0; x < (w + 1) / 2; x++) {
            int v = syn_pos8(x, w), j0 = v >> 3, tx = v & 7;
            int j1 = j0 + 1 < SYN_GRID ? j0 + 1 : j0;
            int top = g[i0][j0] * (8 - tx) + g[i0][j1] * tx;
            int bot = g[i1][j0] * (8 - tx) + g[i1][j1] * tx;
            uint8_t p = (uint8_t)((top * (8 - ty) + bot * ty + 32) >> 6);
            out[(size_t)y * w + x] = p;
            out[(size_t)y * w + w - 1 - x] = p;
        }
    }
}

static void syn_prototype(uint64_t seed, uint32_t k, const struct syn_shape *s,
                          uint8_t *out)
{
    for (uint32_t ch = 0; ch < s->c; ch++)
        syn_plane(seed, SYN_STREAM_PROTO + k + ((uint64_t)ch << 24), s->h,
                  s->w, out + ch * s->plane);
}

static void syn_image(const struct syn_protos *protos, uint64_t seed,
                      uint64_t stream, uint8_t *img, uint8_t *label)
{
    const struct syn_shape *s = &protos->s;
    const int H = (int)s->h, W = (int)s->w, sh = s->shift;
    struct dlb_rng r;
    uint64_t bits = 0;

    dlb_rng_seed_stream(&r, seed, stream);
    uint32_t l = (uint32_t)dlb_rng_below(&r, SYN_CLASSES);
    uint32_t o = (uint32_t)dlb_rng_below(&r, SYN_CLASSES - 1);
    o += o >= l;
    int a = (int)dlb_rng_below(&r, SYN_BLEND_MAX);
    int dx = (int)dlb_rng_below(&r, 2 * (uint64_t)sh + 1) - sh;
    int dy = (int)dlb_rng_below(&r, 2 * (uint64_t)sh + 1) - sh;

    for (uint32_t ch = 0; ch < s->c; ch++) {
        const uint8_t *pl = protos->p + l * s->pixels + ch * s->plane;
        const uint8_t *po = protos->p + o * s->pixels + ch * s->plane;
        uint8_t *out = img + ch * s->plane;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                int sy = y - dy, sx = x - dx, base = 0;
                if (sy >= 0 && sy < H && sx >= 0 && sx < W) {
                    size_t q = (size_t)sy * W + sx;
                    base = ((256 - a) * pl[q] + a * po[q]) >> 8;
                }
                if ((x & 3) == 0)
                    bits = dlb_rng_u64(&r); /* 16 bits for each of 4 pixels */
                int noise = (int)(bits & 0xff) + (int)((bits >> 8) & 0xff) - 255;
                bits >>= 16;
                int v = base + noise * SYN_NOISE_NUM / SYN_NOISE_DEN;
                out[(size_t)y * W + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
    }
    *label = (uint8_t)l;
}

static dlb_status syn_stats(const struct syn_protos *protos, uint64_t seed,
                            float *mean, float *std)
{
    const struct syn_shape *s = &protos->s;
    uint64_t want = (uint64_t)SYN_STATS_SAMPLE * SYN_PIXELS / s->pixels;
    uint32_t n = want < SYN_STATS_MIN ? SYN_STATS_MIN
                 : want > SYN_STATS_SAMPLE ? SYN_STATS_SAMPLE : (uint32_t)want;
    uint8_t *img = malloc(s->pixels), label;
    double sum = 0.0, sq = 0.0;

    if (!img)
        return DLB_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        syn_image(protos, seed, SYN_STREAM_TRAIN + i, img, &label);
        for (size_t p = 0; p < s->pixels; p++) {
            double v = img[p] / 255.0;
            sum += v;
            sq += v * v;
        }
    }
    free(img);
    double count = (double)n * (double)s->pixels;
    double m = sum / count;
    *mean = (float)m;
    *std = (float)sqrt(sq / count - m * m);
    return DLB_OK;
}

uint32_t dlb_synthetic_count(int train, uint32_t c, uint32_t h, uint32_t w)
{
    uint64_t per = (uint64_t)c * h * w;
    if (per == 0 || per > DLB_SYNTHETIC_MAX_BYTES)
        return 0;
    uint64_t fit = DLB_SYNTHETIC_MAX_BYTES / per;
    uint32_t n_train = fit < DLB_SYNTHETIC_TRAIN_N ? (uint32_t)fit
                                                   : DLB_SYNTHETIC_TRAIN_N;
    if (train)
        return n_train;
    uint32_t sixth = n_train / 6 ? n_train / 6 : 1;
    return sixth < DLB_SYNTHETIC_TEST_N ? sixth : DLB_SYNTHETIC_TEST_N;
}

dlb_status dlb_dataset_synthetic_shaped(uint32_t n, uint64_t seed, int train,
                                        uint32_t c, uint32_t h, uint32_t w,
                                        struct dlb_dataset *out)
{
    struct syn_protos protos;
    uint64_t base = train ? SYN_STREAM_TRAIN : SYN_STREAM_TEST;
    uint32_t side = h < w ? h : w;

    memset(out, 0, sizeof *out);
    if (n == 0 || c == 0 || h == 0 || w == 0)
        return DLB_ERR_INPUT;
    protos.s = (struct syn_shape){c, h, w, (size_t)h * w, (size_t)c * h * w,
                                  (int)((uint64_t)SYN_SHIFT * side / SYN_SIDE)};
    protos.p = malloc(SYN_CLASSES * protos.s.pixels);
    out->images = malloc((size_t)n * protos.s.pixels);
    out->labels = malloc(n);
    out->source = malloc(48);
    if (!protos.p || !out->images || !out->labels || !out->source) {
        free(protos.p);
        dlb_dataset_free(out);
        return DLB_ERR_NOMEM;
    }
    snprintf(out->source, 48, "synthetic (seed %llu)",
             (unsigned long long)seed);

    for (uint32_t k = 0; k < SYN_CLASSES; k++)
        syn_prototype(seed, k, &protos.s, protos.p + k * protos.s.pixels);
    for (uint32_t i = 0; i < n; i++)
        syn_image(&protos, seed, base + i,
                  out->images + (size_t)i * protos.s.pixels, out->labels + i);
    dlb_status st = syn_stats(&protos, seed, &out->mean, &out->std);
    free(protos.p);
    if (st != DLB_OK) {
        dlb_dataset_free(out);
        return st;
    }

    out->n = n;
    out->c = c;
    out->h = h;
    out->w = w;
    out->classes = SYN_CLASSES;
    out->synthetic = 1;
    return DLB_OK;
}

dlb_status dlb_dataset_synthetic(uint32_t n, uint64_t seed, int train,
                                 struct dlb_dataset *out)
{
    return dlb_dataset_synthetic_shaped(n, seed, train, 1, SYN_SIDE, SYN_SIDE,
                                        out);
}
