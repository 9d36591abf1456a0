/* An image folder as a data set (dataset = folder:PATH): the ImageFolder
 * layout, a subfolder per class holding PNG and JPEG files, kept as a list
 * of files and decoded when a batch is filled, so that a loader's workers
 * bear the decoding.
 *
 * Classes are the subfolders' names in byte order, their index the label;
 * files are taken in byte order of their names. The test split is
 * PATH/test (or PATH/val) when both it and PATH/train exist, with classes
 * named as in PATH/train; otherwise every sixth file of each class (the
 * 6th, 12th ... by name: Fashion-MNIST's ratio) is held out for it. */
#ifndef DLB_CORE_DATA_FOLDER_H
#define DLB_CORE_DATA_FOLDER_H

#include <stdint.h>

#include "data/dataset.h"
#include "util/error.h"

/* Labels are bytes (struct dlb_dataset): at most this many classes. */
#define DLB_FOLDER_MAX_CLASSES 256u
/* Files of the training split whose pixels give the normalisation. */
#define DLB_FOLDER_STATS_SAMPLE 64u

struct dlb_folder;

/* Split `train` of the folder at `root` for a model that takes `want`
 * (its shape is the data's: every image is scaled and cropped to it):
 * out's n, c, h, w, labels, classes, source, description, mean and std
 * (of the training split's pixels, from up to DLB_FOLDER_STATS_SAMPLE
 * files spread over it), and `folder`; no images. DLB_ERR_INPUT with the
 * path at fault: no class folders, no images in a split, more classes
 * than the model has, a test class unknown to the training split, or no
 * file of the split that decodes. */
dlb_status dlb_folder_open(const char *root, int train,
                           const struct dlb_data_want *want,
                           struct dlb_dataset *out, struct dlb_error *err);

/* Image k of folder data set d into `out` (c x h x w floats, normalised):
 * decoded, scaled and cropped (dlb_crop_plan: randomly from `draw` when
 * `augment`). A file that does not decode is counted and said once, and
 * the next one that does (k + 1, k + 2 ... wrapping) takes its place,
 * label and all (*label). DLB_ERR_INPUT when none does, DLB_ERR_NOMEM.
 * Thread-safe. */
dlb_status dlb_folder_fill(const struct dlb_dataset *d, uint32_t k,
                           int augment, uint64_t draw, float *out,
                           int32_t *label);

/* How many distinct files of the split failed to decode so far. */
uint32_t dlb_folder_corrupt(const struct dlb_folder *f);

/* Where a corrupt file is said (one line, no newline); without it, on
 * standard error. */
void dlb_folder_set_log(struct dlb_folder *f,
                        void (*log)(void *ctx, const char *line), void *ctx);

void dlb_folder_free(struct dlb_folder *f);

#endif
