/* Batch filling and augmentation: the numbers the model sees are the
 * documented normalisation of the stored pixels, the augmentation is a
 * mirror and a bounded shift, and one seed always gives one batch. The
 * synthetic data set is deterministic and its classes can be told apart. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "data/augment.h"
#include "data/dataset.h"
#include "util/rng.h"

#define W 5
#define H 4
#define PX (W * H)

/* A hand-made data set of two 1x4x5 images. */
static void tiny(struct dlb_dataset *d, uint8_t *images, uint8_t *labels)
{
    memset(d, 0, sizeof *d);
    for (int i = 0; i < 2 * PX; i++)
        images[i] = (uint8_t)(i * 13 + 1);
    images[0] = 0;
    images[1] = 255;
    labels[0] = 3;
    labels[1] = 7;
    d->n = 2;
    d->c = 1;
    d->h = H;
    d->w = W;
    d->images = images;
    d->labels = labels;
    d->classes = 10;
    d->mean = 0.2860f;
    d->std = 0.3530f;
}

static float norm(const struct dlb_dataset *d, int v)
{
    return (float)((v / 255.0 - (double)d->mean) / (double)d->std);
}

static void test_normalise(void)
{
    uint8_t images[2 * PX], labels[2];
    struct dlb_dataset d;
    float out[2 * PX];
    int32_t lab[2];
    const uint32_t idx[2] = { 1, 0 };

    tiny(&d, images, labels);
    CHECK(dlb_batch_fill(&d, idx, 2, 0, NULL, out, lab) == DLB_OK);
    CHECK(lab[0] == 7 && lab[1] == 3);
    int exact = 1;
    for (int i = 0; i < PX; i++) {
        exact &= out[i] == norm(&d, images[PX + i]);
        exact &= out[PX + i] == norm(&d, images[i]);
    }
    CHECK(exact);
    /* Known pixels, against figures worked by hand. */
    CHECK_NEAR(out[PX + 0], -0.2860 / 0.3530, 1e-6);
    CHECK_NEAR(out[PX + 1], (1.0 - 0.2860) / 0.3530, 1e-6);

    const uint32_t bad[1] = { 2 };
    CHECK(dlb_batch_fill(&d, bad, 1, 0, NULL, out, NULL) ==
          DLB_ERR_INTERNAL);
}

/* The augmentation by its definition: pixel by pixel, with branches. */
static float reference(const struct dlb_dataset *d, const uint8_t *src,
                       int flip, int dx, int dy, int y, int x)
{
    int sx = flip ? W - 1 - x : x;
    int sy = y - dy;
    sx -= dx;
    if (sy < 0 || sy >= H || sx < 0 || sx >= W)
        return norm(d, 0);
    return norm(d, src[sy * W + sx]);
}

static int matches(const struct dlb_dataset *d, const uint8_t *src,
                   const float *out, int flip, int dx, int dy)
{
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            if (out[y * W + x] != reference(d, src, flip, dx, dy, y, x))
                return 0;
    return 1;
}

static void test_transforms(void)
{
    uint8_t images[2 * PX], labels[2];
    struct dlb_dataset d;
    float lut[256], out[PX];

    tiny(&d, images, labels);
    dlb_norm_lut(&d, lut);

    /* The flip alone is a mirror of every row. */
    dlb_augment_image(images, 1, H, W, lut, 1, 0, 0, out);
    int mirror = 1;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            mirror &= out[y * W + x] == lut[images[y * W + W - 1 - x]];
    CHECK(mirror);

    /* A shift moves the image and pads with intensity 0. */
    dlb_augment_image(images, 1, H, W, lut, 0, 2, -1, out);
    CHECK(out[0] == lut[0] && out[1] == lut[0]);
    CHECK(out[2] == lut[images[1 * W + 0]]);
    CHECK(out[(H - 1) * W + 3] == lut[0]); /* bottom row came from below */

    /* Every combination agrees with the definition. */
    int all = 1;
    for (int flip = 0; flip <= 1; flip++)
        for (int dy = -2; dy <= 2; dy++)
            for (int dx = -2; dx <= 2; dx++) {
                dlb_augment_image(images + PX, 1, H, W, lut, flip, dx, dy,
                                  out);
                all &= matches(&d, images + PX, out, flip, dx, dy);
            }
    CHECK(all);
}

/* Random augmentation only ever produces one of the 50 transforms with
 * offsets within the padding, and over many draws produces all of them. */
static void test_random_augment(void)
{
    uint8_t images[2 * PX], labels[2];
    struct dlb_dataset d;
    struct dlb_rng rng;
    float out[PX];
    int seen[2][5][5] = { { { 0 } } };
    const uint32_t idx[1] = { 1 };
    int in_range = 1;

    tiny(&d, images, labels);
    /* Distinct pixels so that no two transforms give the same output. */
    for (int i = 0; i < PX; i++)
        images[PX + i] = (uint8_t)(10 + i * 11);
    dlb_rng_seed(&rng, 99);
    for (int t = 0; t < 2000; t++) {
        CHECK(dlb_batch_fill(&d, idx, 1, 1, &rng, out, NULL) == DLB_OK);
        int found = 0;
        for (int flip = 0; flip <= 1 && !found; flip++)
            for (int dy = -2; dy <= 2 && !found; dy++)
                for (int dx = -2; dx <= 2 && !found; dx++)
                    if (matches(&d, images + PX, out, flip, dx, dy)) {
                        seen[flip][dy + 2][dx + 2]++;
                        found = 1;
                    }
        in_range &= found;
    }
    CHECK(in_range);
    int min = 2000, max = 0;
    for (int f = 0; f < 2; f++)
        for (int a = 0; a < 5; a++)
            for (int b = 0; b < 5; b++) {
                min = seen[f][a][b] < min ? seen[f][a][b] : min;
                max = seen[f][a][b] > max ? seen[f][a][b] : max;
            }
    /* 40 expected each; these bounds are > 4 standard deviations wide. */
    CHECK(min >= 15 && max <= 70);
}

static void test_same_seed(void)
{
    struct dlb_dataset d;
    struct dlb_rng r1, r2;
    const uint32_t n = 64;
    uint32_t idx[64];
    float *a = malloc(sizeof(float) * n * 784);
    float *b = malloc(sizeof(float) * n * 784);
    int32_t la[64], lb[64];

    CHECK(dlb_dataset_synthetic(1000, 5, 1, &d) == DLB_OK);
    dlb_epoch_order(idx, n, 5, 0, 1);
    dlb_rng_seed(&r1, 42);
    dlb_rng_seed(&r2, 42);
    CHECK(dlb_batch_fill(&d, idx, n, 1, &r1, a, la) == DLB_OK);
    CHECK(dlb_batch_fill(&d, idx, n, 1, &r2, b, lb) == DLB_OK);
    CHECK(memcmp(a, b, sizeof(float) * n * 784) == 0);
    CHECK(memcmp(la, lb, sizeof la) == 0);
    dlb_rng_seed(&r2, 43);
    CHECK(dlb_batch_fill(&d, idx, n, 1, &r2, b, lb) == DLB_OK);
    CHECK(memcmp(a, b, sizeof(float) * n * 784) != 0);
    free(a);
    free(b);
    dlb_dataset_free(&d);
}

/* The in-step fill on several threads gives the serial fill's batch bit
 * for bit, with augmentation (the draws stay in image order) and without,
 * at a size that shares out (256 images). */
static void test_parallel_same(void)
{
    struct dlb_dataset d;
    struct dlb_rng r1, r2;
    const uint32_t n = 256;
    static uint32_t idx[256];
    float *a = malloc(sizeof(float) * n * 784);
    float *b = malloc(sizeof(float) * n * 784);
    static int32_t la[256], lb[256];

    CHECK(dlb_dataset_synthetic(1000, 5, 1, &d) == DLB_OK);
    dlb_epoch_order(idx, n, 5, 0, 1);
    for (int augment = 0; augment <= 1; augment++) {
        dlb_rng_seed(&r1, 42);
        dlb_rng_seed(&r2, 42);
        memset(b, 0, sizeof(float) * n * 784);
        CHECK(dlb_batch_fill(&d, idx, n, augment, &r1, a, la) == DLB_OK);
        CHECK(dlb_batch_fill_par(&d, idx, n, augment, &r2, b, lb) == DLB_OK);
        CHECK(memcmp(a, b, sizeof(float) * n * 784) == 0);
        CHECK(memcmp(la, lb, sizeof la) == 0);
        /* the streams moved on alike */
        CHECK(dlb_rng_u64(&r1) == dlb_rng_u64(&r2));
    }
    free(a);
    free(b);
    dlb_dataset_free(&d);
}

static int is_permutation(const uint32_t *idx, uint32_t n)
{
    uint8_t *seen = calloc(n, 1);
    int ok = seen != NULL;
    for (uint32_t i = 0; ok && i < n; i++) {
        ok = idx[i] < n && !seen[idx[i]];
        if (ok)
            seen[idx[i]] = 1;
    }
    free(seen);
    return ok;
}

static void test_orders(void)
{
    enum { N = 1000 };
    static uint32_t a[N], b[N], c[N];

    dlb_epoch_order(a, N, 1, 0, 0);
    int identity = 1;
    for (uint32_t i = 0; i < N; i++)
        identity &= a[i] == i;
    CHECK(identity);

    dlb_epoch_order(a, N, 1, 3, 1);
    dlb_epoch_order(b, N, 1, 3, 1);
    dlb_epoch_order(c, N, 1, 4, 1);
    CHECK(is_permutation(a, N));
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK(memcmp(a, c, sizeof a) != 0);
    dlb_epoch_order(b, N, 2, 3, 1);
    CHECK(memcmp(a, b, sizeof a) != 0);

    /* Fisher-Yates is unbiased: each of 3! orders of 3 items is equally
     * likely (6000 shuffles, 1000 expected each). */
    struct dlb_rng r;
    int counts[6] = { 0 };
    dlb_rng_seed(&r, 8);
    for (int t = 0; t < 6000; t++) {
        uint32_t v[3] = { 0, 1, 2 };
        dlb_shuffle(v, 3, &r);
        counts[v[0] * 2 + (v[1] > v[2])]++;
    }
    for (int k = 0; k < 6; k++)
        CHECK(counts[k] > 850 && counts[k] < 1150);
    uint32_t one = 0;
    dlb_shuffle(&one, 1, &r);
    dlb_shuffle(NULL, 0, &r);
    CHECK(one == 0);
}

static void test_synthetic(void)
{
    struct dlb_dataset a, b, t;

    CHECK(dlb_dataset_synthetic(0, 1, 1, &a) == DLB_ERR_INPUT);
    CHECK(dlb_dataset_synthetic(3000, 11, 1, &a) == DLB_OK);
    CHECK(dlb_dataset_synthetic(3000, 11, 1, &b) == DLB_OK);
    CHECK(a.n == 3000 && a.c == 1 && a.h == 28 && a.w == 28);
    CHECK(a.classes == 10 && a.synthetic);
    CHECK(memcmp(a.images, b.images, 3000u * 784u) == 0);
    CHECK(memcmp(a.labels, b.labels, 3000) == 0);
    CHECK(a.mean == b.mean && a.std == b.std);
    dlb_dataset_free(&b);

    /* A prefix of a larger set: the data depend on (seed, split) only. */
    CHECK(dlb_dataset_synthetic(100, 11, 1, &b) == DLB_OK);
    CHECK(memcmp(a.images, b.images, 100u * 784u) == 0);
    dlb_dataset_free(&b);

    CHECK(dlb_dataset_synthetic(3000, 12, 1, &b) == DLB_OK);
    CHECK(memcmp(a.images, b.images, 3000u * 784u) != 0);
    dlb_dataset_free(&b);

    /* The test split: other images, same normalisation. */
    CHECK(dlb_dataset_synthetic(2000, 11, 0, &t) == DLB_OK);
    CHECK(memcmp(a.images, t.images, 2000u * 784u) != 0);
    CHECK(t.mean == a.mean && t.std == a.std);
    CHECK(a.mean > 0.05f && a.mean < 0.95f && a.std > 0.05f);

    /* Every class occurs, roughly evenly. */
    uint32_t count[10] = { 0 };
    for (uint32_t i = 0; i < a.n; i++)
        count[a.labels[i] < 10 ? a.labels[i] : 0]++;
    for (int k = 0; k < 10; k++)
        CHECK(count[k] > 200 && count[k] < 400);

    /* Learnable: class means of the training split classify the test split
     * well above chance (10%) by nearest mean. */
    static double mean[10][784];
    for (uint32_t i = 0; i < a.n; i++)
        for (int p = 0; p < 784; p++)
            mean[a.labels[i]][p] += a.images[(size_t)i * 784 + p];
    for (int k = 0; k < 10; k++)
        for (int p = 0; p < 784; p++)
            mean[k][p] /= count[k] ? count[k] : 1;
    uint32_t right = 0;
    for (uint32_t i = 0; i < t.n; i++) {
        double best = 1e300;
        int arg = -1;
        for (int k = 0; k < 10; k++) {
            double dist = 0.0;
            for (int p = 0; p < 784; p++) {
                double e = t.images[(size_t)i * 784 + p] - mean[k][p];
                dist += e * e;
            }
            if (dist < best) {
                best = dist;
                arg = k;
            }
        }
        right += arg == t.labels[i];
    }
    double acc = (double)right / t.n;
    fprintf(stderr, "synthetic: nearest class mean accuracy %.3f, "
            "mean %.4f std %.4f\n", acc, a.mean, a.std);
    CHECK(acc > 0.90);
    dlb_dataset_free(&a);
    dlb_dataset_free(&t);
}

int main(void)
{
    test_normalise();
    test_transforms();
    test_random_augment();
    test_same_seed();
    test_parallel_same();
    test_orders();
    test_synthetic();
    return check_exit();
}
