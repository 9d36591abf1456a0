/* The training or test set held in memory as uint8 pixels: Fashion-MNIST
 * read from its IDX files, or a deterministic synthetic stand-in of the same
 * shape when the files are not installed. */
#ifndef DLB_CORE_DATA_DATASET_H
#define DLB_CORE_DATA_DATASET_H

#include <stdint.h>

#include <dlbench/plugin.h>

#include "util/error.h"

/* Where Debian's dataset-fashion-mnist package installs the files. */
#define DLB_DATASET_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"

/* Fashion-MNIST's training-set statistics of x/255; the test set is
 * normalised with the same constants, as is usual. */
#define DLB_FASHION_MNIST_MEAN 0.2860f
#define DLB_FASHION_MNIST_STD 0.3530f

/* Sizes of the synthetic sets the resolver makes: Fashion-MNIST's, so that
 * epochs and step counts mean the same with either. */
#define DLB_SYNTHETIC_TRAIN_N 60000u
#define DLB_SYNTHETIC_TEST_N 10000u

/* Forward-declared in <dlbench/plugin.h>; the core owns the layout. */
struct dlb_dataset {
    uint32_t n, c, h, w;
    uint8_t *images;  /* n x c x h x w, row-major */
    uint8_t *labels;  /* n, each < classes */
    uint32_t classes;
    char *source;     /* the images file, or "synthetic (seed N)" */
    int synthetic;
    float mean, std;  /* normalisation: (x/255 - mean) / std */
};

/* Load Fashion-MNIST (or any MNIST-layout set of 10 classes) from `dir`:
 * train-images-idx3-ubyte.gz and train-labels-idx1-ubyte.gz when `train` is
 * 1, t10k-* when 0; the names without .gz are tried when the .gz files are
 * absent. Counts must match and every label be below 10. */
dlb_status dlb_dataset_load(const char *dir, int train, struct dlb_dataset *out,
                            struct dlb_error *err);

/* A learnable synthetic set of n 1x28x28 images in 10 classes. Each class has
 * a fixed smooth, left-right symmetric prototype drawn from `seed`; an image
 * is its class's prototype blended with another class's, shifted and
 * noised. The train and test sets of one seed share the prototypes and the
 * normalisation constants but not the images. The same (n, seed, train)
 * gives byte-identical data. Returns DLB_ERR_INPUT for n == 0,
 * DLB_ERR_NOMEM. */
dlb_status dlb_dataset_synthetic(uint32_t n, uint64_t seed, int train,
                                 struct dlb_dataset *out);

/* Resolve the suite's data setting. mode "fashion-mnist" loads from `path`
 * (DLB_DATASET_DEFAULT_DIR when NULL or empty) and fails when the files are
 * missing; "synthetic" makes DLB_SYNTHETIC_*_N images from `seed`; "auto"
 * loads the files when both exist and makes synthetic data when neither
 * does. *announced_synthetic (may be NULL) is set to 1 when "auto" fell back
 * to synthetic data, which the caller must tell the user. */
dlb_status dlb_dataset_open(const char *mode, const char *path, int train,
                            uint64_t seed, struct dlb_dataset *out,
                            int *announced_synthetic, struct dlb_error *err);

/* Free what a load, synthetic or open call allocated; zeroes *d. */
void dlb_dataset_free(struct dlb_dataset *d);

#endif
