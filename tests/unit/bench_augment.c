/* Micro-benchmark of batch filling on one thread: images per second with
 * and without augmentation, over shuffled synthetic data of Fashion-MNIST's
 * shape (batch 256, 60,000 images, so the source does not fit in cache the
 * way one small batch would). Not a test: it prints figures. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "data/augment.h"
#include "data/dataset.h"

#define BENCH_BATCH 256u
#define BENCH_SECONDS 1.0

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Fill batches in epoch order for about BENCH_SECONDS; images per second. */
static double run(const struct dlb_dataset *d, const uint32_t *order,
                  int augment, float *images, int32_t *labels)
{
    struct dlb_rng rng;
    uint64_t done = 0;
    uint32_t pos = 0;
    double t0 = now(), t;

    dlb_rng_seed(&rng, 1);
    do {
        for (int k = 0; k < 16; k++) {
            if (pos + BENCH_BATCH > d->n)
                pos = 0;
            dlb_batch_fill(d, order + pos, BENCH_BATCH, augment, &rng, images,
                           labels);
            pos += BENCH_BATCH;
            done += BENCH_BATCH;
        }
        t = now() - t0;
    } while (t < BENCH_SECONDS);
    return (double)done / t;
}

int main(void)
{
    struct dlb_dataset d;
    if (dlb_dataset_synthetic(DLB_SYNTHETIC_TRAIN_N, 1, 1, &d) != DLB_OK) {
        fprintf(stderr, "bench_augment: out of memory\n");
        return 1;
    }
    uint32_t *order = malloc(sizeof *order * d.n);
    float *images = malloc(sizeof *images * BENCH_BATCH * 784);
    int32_t *labels = malloc(sizeof *labels * BENCH_BATCH);
    if (!order || !images || !labels) {
        fprintf(stderr, "bench_augment: out of memory\n");
        free(order);
        free(images);
        free(labels);
        dlb_dataset_free(&d);
        return 1;
    }
    dlb_epoch_order(order, d.n, 1, 0, 1);

    run(&d, order, 0, images, labels); /* warm up caches and pages */
    double plain = run(&d, order, 0, images, labels);
    double aug = run(&d, order, 1, images, labels);
    printf("batch fill, 1 thread, batch %u, 1x28x28:\n", BENCH_BATCH);
    printf("  normalise only        %10.0f images/s  (%.0f ns/image)\n",
           plain, 1e9 / plain);
    printf("  flip + crop (pad 2)   %10.0f images/s  (%.0f ns/image)\n", aug,
           1e9 / aug);

    free(order);
    free(images);
    free(labels);
    dlb_dataset_free(&d);
    return 0;
}
