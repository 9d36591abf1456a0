/* The training or test set held in memory as uint8 pixels: Fashion-MNIST
 * read from its IDX files, or a deterministic synthetic stand-in of the same
 * shape when the files are not installed. */
#ifndef DLB_CORE_DATA_DATASET_H
#define DLB_CORE_DATA_DATASET_H

#include <stdint.h>

#include <dlbench/plugin.h>

#include "util/error.h"

/* dataset = folder:PATH names an image folder. */
#define DLB_DATASET_FOLDER_PREFIX "folder:"

/* Where Debian's dataset-fashion-mnist package installs the files. */
#define DLB_DATASET_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"

/* Fashion-MNIST's training-set statistics of x/255; the test set is
 * normalised with the same constants, as is usual. */
#define DLB_FASHION_MNIST_MEAN 0.2860f
#define DLB_FASHION_MNIST_STD 0.3530f

/* Sizes of the synthetic sets the resolver makes: Fashion-MNIST's, so that
 * epochs and step counts mean the same with either, as long as a split
 * fits in DLB_SYNTHETIC_MAX_BYTES (dlb_synthetic_count). */
#define DLB_SYNTHETIC_TRAIN_N 60000u
#define DLB_SYNTHETIC_TEST_N 10000u
#define DLB_SYNTHETIC_MAX_BYTES (256u << 20)

/* Forward-declared in <dlbench/plugin.h>; the core owns the layout. */
struct dlb_dataset {
    uint32_t n, c, h, w;
    uint8_t *images;  /* n x c x h x w, row-major */
    uint8_t *labels;  /* n, each < classes */
    uint32_t classes;
    char *source;     /* the images file, or "synthetic (seed N)" */
    int synthetic;
    float mean, std;  /* normalisation: (x/255 - mean) / std */
    /* What a user reads in the log, results.json and the report (the
     * count beside it): "Fashion-MNIST 1x28x28", "Fashion-MNIST padded
     * 28x28 -> 32x32", "synthetic 3x224x224 (seed 42)". NULL from
     * dlb_dataset_load and dlb_dataset_synthetic; the open calls set it. */
    char *description;
    uint32_t padded_from_h, padded_from_w; /* 0: not padded */
    /* An image folder (folder.h): images is NULL, and a batch fill decodes
     * the files; NULL for data held in memory. */
    struct dlb_folder *folder;
};

/* The input a model takes (0 in every field: whatever the data are). */
struct dlb_data_want {
    uint32_t c, h, w, classes;
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

/* dlb_dataset_synthetic at any shape c x h x w (1 x 28 x 28 gives the very
 * bytes dlb_dataset_synthetic gives): per channel the class prototypes
 * are drawn from their own streams, and the shift scales with the side.
 * Returns DLB_ERR_INPUT for n == 0 or a zero dimension, DLB_ERR_NOMEM. */
dlb_status dlb_dataset_synthetic_shaped(uint32_t n, uint64_t seed, int train,
                                        uint32_t c, uint32_t h, uint32_t w,
                                        struct dlb_dataset *out);

/* How many synthetic images a split of c x h x w holds: the training split
 * DLB_SYNTHETIC_TRAIN_N, or as many as fit in DLB_SYNTHETIC_MAX_BYTES when
 * fewer; the test split DLB_SYNTHETIC_TEST_N, or a sixth of the training
 * split when that is fewer (Fashion-MNIST's ratio). 0 when one image does
 * not fit. 3x224x224 (147 KiB an image): 1783 and 297. */
uint32_t dlb_synthetic_count(int train, uint32_t c, uint32_t h, uint32_t w);

/* Whether data set `d` (loaded, not synthetic) can feed a model that takes
 * `want`: DLB_OK with *pad 0 when the shapes agree, with *pad 1 when the
 * images are smaller in height or width (same channels) and are to be
 * zero-padded; else DLB_ERR_INPUT with a message that names both shapes.
 * More classes than the model has is refused too. */
dlb_status dlb_dataset_fit(const struct dlb_dataset *d,
                           const struct dlb_data_want *want, int *pad,
                           struct dlb_error *err);

/* Zero-pad every image of `d` to h x w, centred (the extra row or column
 * of an odd difference goes to the bottom or right), once, in place of the
 * old images; labels and normalisation stay: the border is background,
 * as the images' own margins are. h, w at least d's. */
dlb_status dlb_dataset_pad(struct dlb_dataset *d, uint32_t h, uint32_t w,
                           struct dlb_error *err);

/* dlb_dataset_open for a model that takes `want` (NULL: the data's own
 * shape). "folder:PATH" opens the image folder at PATH (folder.h) at the
 * model's shape, which it needs. "fashion-mnist" pads the images to the model's height and width
 * when they are smaller and refuses a shape they cannot take (channels,
 * larger images, classes); "synthetic" makes dlb_synthetic_count images at
 * the model's shape; "auto" loads the files when they exist and fit the
 * model, else makes synthetic data and says why in `why` (a sentence;
 * empty when the files were used). Sets out->description. */
dlb_status dlb_dataset_open_for(const char *mode, const char *path, int train,
                                uint64_t seed, const struct dlb_data_want *want,
                                struct dlb_dataset *out, char *why,
                                size_t why_len, struct dlb_error *err);

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
