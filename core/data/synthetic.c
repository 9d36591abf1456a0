/* Synthetic stand-in for Fashion-MNIST: same shape, 10 classes, learnable,
 * deterministic. Every image is generated from its own RNG stream (seed,
 * split, index), so the data depend only on (seed, split) and not on n or
 * on generation order. Integer arithmetic keeps the bytes the same on every
 * machine and compiler. */
#include "data/dataset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/rng.h"

#define SYN_SIDE 28
#define SYN_PIXELS (SYN_SIDE * SYN_SIDE)
#define SYN_GRID 7
#define SYN_CLASSES 10
/* Stream ids, far apart so that splits and prototypes never share one. */
#define SYN_STREAM_PROTO 0x50524f544full
#define SYN_STREAM_TRAIN (1ull << 40)
#define SYN_STREAM_TEST (2ull << 40)
/* Normalisation constants come from this many training-stream images, so
 * the train and test sets of one seed share them, as Fashion-MNIST's do. */
#define SYN_STATS_SAMPLE 1024u
/* Difficulty: an image is (256 - a)/256 of its class's prototype plus a/256
 * of another class's, a < SYN_BLEND_MAX, shifted by up to SYN_SHIFT pixels,
 * plus triangular noise of standard deviation about 104 * 2/5 = 42. Tuned so
 * that a nearest-class-mean classifier gets most but not all right. */
#define SYN_BLEND_MAX 116u
#define SYN_SHIFT 2
#define SYN_NOISE_NUM 2
#define SYN_NOISE_DEN 5

struct syn_protos {
    uint8_t p[SYN_CLASSES][SYN_PIXELS];
};

/* Bilinear sample position of output pixel i (of SYN_SIDE) on the grid, in
 * eighths of a cell: ((i + 0.5) * 7/28 - 0.5) * 8 = 2i - 3, clamped. Integer
 * so that no compiler's choice of floating-point contraction can change a
 * byte. */
static int syn_pos8(int i)
{
    int u = 2 * i - 3;
    return u < 0 ? 0 : u > 8 * (SYN_GRID - 1) ? 8 * (SYN_GRID - 1) : u;
}

/* A smooth pattern: a coarse random grid, bilinearly upsampled. Mirror
 * symmetric so that a horizontal flip keeps the class, as it (mostly) does
 * for clothes; a quarter of the cells are dark, like the background of
 * Fashion-MNIST. */
static void syn_prototype(uint64_t seed, uint32_t k, uint8_t *out)
{
    struct dlb_rng r;
    int g[SYN_GRID][SYN_GRID];

    dlb_rng_seed_stream(&r, seed, SYN_STREAM_PROTO + k);
    for (int i = 0; i < SYN_GRID; i++)
        for (int j = 0; j <= SYN_GRID / 2; j++) {
            int v = dlb_rng_below(&r, 4) == 0
                        ? 0 : 48 + (int)dlb_rng_below(&r, 208);
            g[i][j] = v;
            g[i][SYN_GRID - 1 - j] = v;
        }
    for (int y = 0; y < SYN_SIDE; y++) {
        int u = syn_pos8(y), i0 = u >> 3, ty = u & 7;
        int i1 = i0 + 1 < SYN_GRID ? i0 + 1 : i0;
        for (int x = 0; x < SYN_SIDE / 2; x++) {
            int v = syn_pos8(x), j0 = v >> 3, tx = v & 7, j1 = j0 + 1;
            int top = g[i0][j0] * (8 - tx) + g[i0][j1] * tx;
            int bot = g[i1][j0] * (8 - tx) + g[i1][j1] * tx;
            uint8_t p = (uint8_t)((top * (8 - ty) + bot * ty + 32) >> 6);
            out[y * SYN_SIDE + x] = p;
            out[y * SYN_SIDE + SYN_SIDE - 1 - x] = p;
        }
    }
}

static void syn_image(const struct syn_protos *protos, uint64_t seed, uint64_t stream,
                      uint8_t *img, uint8_t *label)
{
    struct dlb_rng r;
    uint64_t bits = 0;

    dlb_rng_seed_stream(&r, seed, stream);
    uint32_t l = (uint32_t)dlb_rng_below(&r, SYN_CLASSES);
    uint32_t o = (uint32_t)dlb_rng_below(&r, SYN_CLASSES - 1);
    o += o >= l;
    int a = (int)dlb_rng_below(&r, SYN_BLEND_MAX);
    int dx = (int)dlb_rng_below(&r, 2 * SYN_SHIFT + 1) - SYN_SHIFT;
    int dy = (int)dlb_rng_below(&r, 2 * SYN_SHIFT + 1) - SYN_SHIFT;
    const uint8_t *pl = protos->p[l], *po = protos->p[o];

    for (int y = 0; y < SYN_SIDE; y++)
        for (int x = 0; x < SYN_SIDE; x++) {
            int sy = y - dy, sx = x - dx, base = 0;
            if (sy >= 0 && sy < SYN_SIDE && sx >= 0 && sx < SYN_SIDE) {
                int s = sy * SYN_SIDE + sx;
                base = ((256 - a) * pl[s] + a * po[s]) >> 8;
            }
            if ((x & 3) == 0)
                bits = dlb_rng_u64(&r); /* 16 bits for each of 4 pixels */
            int noise = (int)(bits & 0xff) + (int)((bits >> 8) & 0xff) - 255;
            bits >>= 16;
            int v = base + noise * SYN_NOISE_NUM / SYN_NOISE_DEN;
            img[y * SYN_SIDE + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    *label = (uint8_t)l;
}

static void syn_stats(const struct syn_protos *protos, uint64_t seed, float *mean,
                      float *std)
{
    uint8_t img[SYN_PIXELS], label;
    double sum = 0.0, sq = 0.0;

    for (uint32_t i = 0; i < SYN_STATS_SAMPLE; i++) {
        syn_image(protos, seed, SYN_STREAM_TRAIN + i, img, &label);
        for (int p = 0; p < SYN_PIXELS; p++) {
            double v = img[p] / 255.0;
            sum += v;
            sq += v * v;
        }
    }
    double count = (double)SYN_STATS_SAMPLE * SYN_PIXELS;
    double m = sum / count;
    *mean = (float)m;
    *std = (float)sqrt(sq / count - m * m);
}

dlb_status dlb_dataset_synthetic(uint32_t n, uint64_t seed, int train,
                                 struct dlb_dataset *out)
{
    struct syn_protos protos;
    uint64_t base = train ? SYN_STREAM_TRAIN : SYN_STREAM_TEST;

    memset(out, 0, sizeof *out);
    if (n == 0)
        return DLB_ERR_INPUT;
    out->images = malloc((size_t)n * SYN_PIXELS);
    out->labels = malloc(n);
    out->source = malloc(48);
    if (!out->images || !out->labels || !out->source) {
        dlb_dataset_free(out);
        return DLB_ERR_NOMEM;
    }
    snprintf(out->source, 48, "synthetic (seed %llu)",
             (unsigned long long)seed);

    for (uint32_t k = 0; k < SYN_CLASSES; k++)
        syn_prototype(seed, k, protos.p[k]);
    for (uint32_t i = 0; i < n; i++)
        syn_image(&protos, seed, base + i, out->images + (size_t)i * SYN_PIXELS,
                  out->labels + i);
    syn_stats(&protos, seed, &out->mean, &out->std);

    out->n = n;
    out->c = 1;
    out->h = SYN_SIDE;
    out->w = SYN_SIDE;
    out->classes = SYN_CLASSES;
    out->synthetic = 1;
    return DLB_OK;
}
