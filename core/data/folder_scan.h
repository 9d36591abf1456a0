/* Listing an image folder (folder.h's layout) into its classes and the
 * files of its two splits; nothing is opened but directories. */
#ifndef DLB_CORE_DATA_FOLDER_SCAN_H
#define DLB_CORE_DATA_FOLDER_SCAN_H

#include <stdint.h>

#include "util/error.h"

struct dlb_file_list {
    char **paths;     /* n paths, class by class, names in byte order */
    uint8_t *labels;  /* n labels */
    uint32_t n;
};

struct dlb_folder_scan {
    char **classes;   /* names in byte order; the index is the label */
    uint32_t n_classes;
    struct dlb_file_list split[2]; /* [0]: test, [1]: train */
    int held_out;     /* the test split is every sixth file of each class */
};

/* Files of a class at positions 5, 11, 17 ... (by name) are the test
 * split's when there is no PATH/test or PATH/val. */
#define DLB_FOLDER_HOLD_OUT 6u

/* List `root`. DLB_ERR_IO for a folder that cannot be read, DLB_ERR_INPUT
 * for a layout that is not an image folder (no class subfolders, over
 * max_classes classes, a test class the training split lacks), each
 * naming the path. An empty split is not an error here. */
dlb_status dlb_folder_scan(const char *root, uint32_t max_classes,
                           struct dlb_folder_scan *out, struct dlb_error *err);

void dlb_folder_scan_free(struct dlb_folder_scan *s);

#endif
