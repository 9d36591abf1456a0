/* Data at the model's input shape: Fashion-MNIST-shaped images zero-padded
 * into the centre of a larger input with their labels, refused where they
 * cannot fit; synthetic data at any shape, deterministic per seed, with
 * classes a nearest-mean classifier tells apart, in a bounded count; and
 * dlb_dataset_open_for's choice between the two. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "data/dataset.h"
#include "util/rng.h"

/* n random 1x28x28 images (never all zero) with labels i % 10. */
static void random_set(struct dlb_dataset *d, uint32_t n, uint64_t seed)
{
    struct dlb_rng r;
    memset(d, 0, sizeof *d);
    d->images = malloc((size_t)n * 784);
    d->labels = malloc(n);
    d->source = strdup("random");
    CHECK(d->images && d->labels && d->source);
    dlb_rng_seed(&r, seed);
    for (size_t p = 0; p < (size_t)n * 784; p++)
        d->images[p] = (uint8_t)(1 + dlb_rng_below(&r, 255));
    for (uint32_t i = 0; i < n; i++)
        d->labels[i] = (uint8_t)(i % 10);
    *d = (struct dlb_dataset){n, 1, 28, 28, d->images, d->labels, 10,
                              d->source, 0, 0.286f, 0.353f, NULL, 0, 0, NULL};
}

/* Padding to h x w puts image i at rows top.., columns left.. with zeros
 * everywhere else; the labels and normalisation stay. */
static void check_pad(uint32_t h, uint32_t w, uint32_t top, uint32_t left)
{
    struct dlb_dataset d, orig;
    struct dlb_error err = {""};
    random_set(&d, 5, h * 1000 + w);
    random_set(&orig, 5, h * 1000 + w);
    CHECK(dlb_dataset_pad(&d, h, w, &err) == DLB_OK);
    CHECK(d.n == 5 && d.c == 1 && d.h == h && d.w == w);
    CHECK(d.padded_from_h == 28 && d.padded_from_w == 28);
    CHECK(memcmp(d.labels, orig.labels, 5) == 0);
    CHECK(d.mean == orig.mean && d.std == orig.std);
    size_t wrong = 0;
    for (uint32_t i = 0; i < 5; i++)
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++) {
                uint8_t got = d.images[((size_t)i * h + y) * w + x];
                int in = y >= top && y < top + 28 && x >= left && x < left + 28;
                uint8_t want = in ? orig.images[(size_t)i * 784 +
                                                (y - top) * 28 + (x - left)]
                                  : 0;
                wrong += got != want;
            }
    CHECK(wrong == 0);
    dlb_dataset_free(&d);
    dlb_dataset_free(&orig);
}

static void test_pad(void)
{
    check_pad(32, 32, 2, 2);
    check_pad(31, 30, 1, 1); /* the odd row goes to the bottom */
    check_pad(28, 33, 0, 2);
    struct dlb_dataset d;
    struct dlb_error err = {""};
    random_set(&d, 2, 1);
    CHECK(dlb_dataset_pad(&d, 27, 28, &err) == DLB_ERR_INTERNAL);
    dlb_dataset_free(&d);
}

static void test_fit(void)
{
    struct dlb_dataset d;
    struct dlb_error err = {""};
    int pad = -1;
    random_set(&d, 3, 2);
    CHECK(dlb_dataset_fit(&d, NULL, &pad, &err) == DLB_OK && pad == 0);
    const struct dlb_data_want same = {1, 28, 28, 10}, r20 = {1, 32, 32, 10};
    CHECK(dlb_dataset_fit(&d, &same, &pad, &err) == DLB_OK && pad == 0);
    CHECK(dlb_dataset_fit(&d, &r20, &pad, &err) == DLB_OK && pad == 1);

    const struct dlb_data_want rgb = {3, 224, 224, 1000};
    CHECK(dlb_dataset_fit(&d, &rgb, &pad, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "the model takes 3x224x224 images in 1000 classes; "
                          "the data set random has 3 of 1x28x28 in 10 classes"));
    CHECK(strstr(err.msg, "the channels must agree"));
    const struct dlb_data_want small = {1, 24, 24, 10};
    CHECK(dlb_dataset_fit(&d, &small, &pad, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "not cropped"));
    /* 28 in 38 is under 3/4 of the side: a thumbnail, not a border */
    const struct dlb_data_want big = {1, 38, 38, 10};
    CHECK(dlb_dataset_fit(&d, &big, &pad, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "3/4"));
    const struct dlb_data_want few = {1, 32, 32, 5};
    CHECK(dlb_dataset_fit(&d, &few, &pad, &err) == DLB_ERR_INPUT);
    dlb_dataset_free(&d);
}

/* Class means of `train` classify `test` by nearest mean: the fraction
 * right. */
static double nearest_mean(const struct dlb_dataset *train,
                           const struct dlb_dataset *test)
{
    size_t per = (size_t)train->c * train->h * train->w;
    double *mean = calloc(10 * per, sizeof *mean);
    uint32_t count[10] = {0}, right = 0;
    CHECK(mean != NULL);
    for (uint32_t i = 0; i < train->n; i++) {
        count[train->labels[i]]++;
        for (size_t p = 0; p < per; p++)
            mean[train->labels[i] * per + p] += train->images[i * per + p];
    }
    for (size_t k = 0; k < 10; k++)
        for (size_t p = 0; p < per; p++)
            mean[k * per + p] /= count[k] ? count[k] : 1;
    for (uint32_t i = 0; i < test->n; i++) {
        double best = 0;
        int arg = -1;
        for (int k = 0; k < 10; k++) {
            double dist = 0;
            for (size_t p = 0; p < per; p++) {
                double v = test->images[i * per + p] - mean[k * per + p];
                dist += v * v;
            }
            if (arg < 0 || dist < best) {
                best = dist;
                arg = k;
            }
        }
        right += arg == test->labels[i];
    }
    free(mean);
    return (double)right / test->n;
}

static void check_synthetic(uint32_t c, uint32_t h, uint32_t w, uint32_t n)
{
    struct dlb_dataset a, b, other, test;
    size_t per = (size_t)c * h * w;
    CHECK(dlb_dataset_synthetic_shaped(n, 7, 1, c, h, w, &a) == DLB_OK);
    CHECK(dlb_dataset_synthetic_shaped(n, 7, 1, c, h, w, &b) == DLB_OK);
    CHECK(a.n == n && a.c == c && a.h == h && a.w == w && a.synthetic);
    CHECK(memcmp(a.images, b.images, n * per) == 0);
    CHECK(memcmp(a.labels, b.labels, n) == 0);
    CHECK(a.mean == b.mean && a.std == b.std);
    CHECK(a.mean > 0.05f && a.mean < 0.95f && a.std > 0.05f);
    CHECK(dlb_dataset_synthetic_shaped(n, 8, 1, c, h, w, &other) == DLB_OK);
    CHECK(memcmp(a.images, other.images, n * per) != 0);
    /* every channel carries a pattern of its own */
    if (c > 1)
        CHECK(memcmp(a.images, a.images + (size_t)h * w, (size_t)h * w) != 0);
    /* learnable: well above chance (10%) by nearest class mean */
    CHECK(dlb_dataset_synthetic_shaped(n / 4, 7, 0, c, h, w, &test) == DLB_OK);
    double acc = nearest_mean(&a, &test);
    if (acc < 0.5)
        fprintf(stderr, "%ux%ux%u: nearest mean %.3f\n", c, h, w, acc);
    CHECK(acc >= 0.5 && acc < 1.0);
    dlb_dataset_free(&a);
    dlb_dataset_free(&b);
    dlb_dataset_free(&other);
    dlb_dataset_free(&test);
}

static void test_synthetic(void)
{
    /* 1x28x28 is the historical set, byte for byte */
    struct dlb_dataset a, b;
    CHECK(dlb_dataset_synthetic(300, 5, 1, &a) == DLB_OK);
    CHECK(dlb_dataset_synthetic_shaped(300, 5, 1, 1, 28, 28, &b) == DLB_OK);
    CHECK(memcmp(a.images, b.images, 300u * 784u) == 0);
    CHECK(a.mean == b.mean && a.std == b.std);
    dlb_dataset_free(&a);
    dlb_dataset_free(&b);
    CHECK(dlb_dataset_synthetic_shaped(10, 5, 1, 0, 28, 28, &a) == DLB_ERR_INPUT);

    check_synthetic(1, 32, 32, 2000);
    check_synthetic(3, 32, 32, 2000);
    check_synthetic(3, 224, 224, 200);
}

static void test_count(void)
{
    CHECK(dlb_synthetic_count(1, 1, 28, 28) == DLB_SYNTHETIC_TRAIN_N);
    CHECK(dlb_synthetic_count(0, 1, 28, 28) == DLB_SYNTHETIC_TEST_N);
    CHECK(dlb_synthetic_count(1, 1, 32, 32) == DLB_SYNTHETIC_TRAIN_N);
    uint32_t tr = dlb_synthetic_count(1, 3, 224, 224);
    uint32_t te = dlb_synthetic_count(0, 3, 224, 224);
    CHECK(tr == 1783 && te == 297);
    CHECK((uint64_t)tr * 3 * 224 * 224 <= DLB_SYNTHETIC_MAX_BYTES);
    CHECK((uint64_t)(tr + 1) * 3 * 224 * 224 > DLB_SYNTHETIC_MAX_BYTES);
    CHECK(dlb_synthetic_count(1, 3, 16384, 16384) == 0);
    CHECK(dlb_synthetic_count(1, 3, 8192, 8192) == 1);
    CHECK(dlb_synthetic_count(0, 3, 8192, 8192) == 1);
}

/* An IDX file of n items of `dims` (rank 3 images or rank 1 labels). */
static void write_idx(const char *path, uint8_t rank, const uint32_t *dims,
                      const uint8_t *data, size_t len)
{
    gzFile f = gzopen(path, "wb");
    uint8_t head[4 + 12] = {0, 0, 0x08, rank};
    CHECK(f != NULL);
    for (int k = 0; k < rank; k++) {
        head[4 + 4 * k] = (uint8_t)(dims[k] >> 24);
        head[5 + 4 * k] = (uint8_t)(dims[k] >> 16);
        head[6 + 4 * k] = (uint8_t)(dims[k] >> 8);
        head[7 + 4 * k] = (uint8_t)dims[k];
    }
    CHECK(gzwrite(f, head, 4 + 4u * rank) == (int)(4 + 4u * rank));
    CHECK(gzwrite(f, data, (unsigned)len) == (int)len);
    CHECK(gzclose(f) == Z_OK);
}

static void write_split(const char *dir, const char *split,
                        const struct dlb_dataset *d)
{
    char path[600];
    const uint32_t dims[3] = {d->n, 28, 28};
    snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte.gz", dir, split);
    write_idx(path, 3, dims, d->images, (size_t)d->n * 784);
    snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte.gz", dir, split);
    write_idx(path, 1, dims, d->labels, d->n);
}

static void test_open_for(void)
{
    char dir[512], why[512];
    struct dlb_dataset src, d;
    struct dlb_error err = {""};
    check_temp_template(dir, sizeof dir, "dlb-test-dataset-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    random_set(&src, 20, 3);
    write_split(dir, "train", &src);
    write_split(dir, "t10k", &src);

    const struct dlb_data_want r20 = {1, 32, 32, 10}, r18 = {3, 224, 224, 1000};
    CHECK(dlb_dataset_open_for("fashion-mnist", dir, 1, 1, &r20, &d, why,
                               sizeof why, &err) == DLB_OK);
    CHECK(d.h == 32 && d.w == 32 && d.n == 20 && !d.synthetic && !why[0]);
    CHECK(strcmp(d.description, "Fashion-MNIST padded 28x28 -> 32x32") == 0);
    CHECK(d.images[2 * 32 + 2] == src.images[0] && d.images[0] == 0);
    CHECK(memcmp(d.labels, src.labels, 20) == 0);
    dlb_dataset_free(&d);

    CHECK(dlb_dataset_open_for("auto", dir, 0, 1, NULL, &d, why, sizeof why,
                               &err) == DLB_OK);
    CHECK(strcmp(d.description, "Fashion-MNIST 1x28x28") == 0 && !why[0]);
    dlb_dataset_free(&d);

    /* real data that cannot fit: refused when asked for, synthetic (with
     * the reason) under auto */
    CHECK(dlb_dataset_open_for("fashion-mnist", dir, 1, 1, &r18, &d, why,
                               sizeof why, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "the channels must agree") && d.images == NULL);
    CHECK(dlb_dataset_open_for("auto", dir, 0, 9, &r18, &d, why, sizeof why,
                               &err) == DLB_OK);
    CHECK(d.synthetic && d.c == 3 && d.h == 224 && d.n == 297);
    CHECK(strcmp(d.description, "synthetic 3x224x224 (seed 9)") == 0);
    CHECK(strstr(why, "1x28x28 images") && strstr(why, "3x224x224 input"));
    dlb_dataset_free(&d);

    /* synthetic when asked, at the model's shape */
    CHECK(dlb_dataset_open_for("synthetic", dir, 1, 4, &r20, &d, why,
                               sizeof why, &err) == DLB_OK);
    CHECK(d.synthetic && d.h == 32 && d.n == DLB_SYNTHETIC_TRAIN_N && !why[0]);
    dlb_dataset_free(&d);
    const struct dlb_data_want five = {1, 32, 32, 5};
    CHECK(dlb_dataset_open_for("synthetic", dir, 1, 4, &five, &d, why,
                               sizeof why, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "the model has 5"));

    char path[600];
    for (int k = 0; k < 4; k++) {
        static const char *const names[] = {
            "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
            "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"};
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        unlink(path);
    }
    CHECK(dlb_dataset_open_for("auto", dir, 1, 4, &r20, &d, why, sizeof why,
                               &err) == DLB_OK);
    CHECK(d.synthetic && d.h == 32 && strstr(why, "not found"));
    dlb_dataset_free(&d);
    rmdir(dir);
    dlb_dataset_free(&src);
}

int main(void)
{
    test_pad();
    test_fit();
    test_count();
    test_synthetic();
    test_open_for();
    return check_exit();
}
