/* The IDX file format of MNIST and Fashion-MNIST: a 4-byte magic number
 * (two zero bytes, a type code, the number of dimensions), one big-endian
 * uint32 per dimension, then the payload in row-major order. Only unsigned
 * bytes (type code 0x08) are accepted: that is what the data sets use. */
#ifndef DLB_CORE_DATA_IDX_H
#define DLB_CORE_DATA_IDX_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define DLB_IDX_MAX_DIMS 3

struct dlb_idx {
    uint32_t ndim;
    uint32_t dims[DLB_IDX_MAX_DIMS];
    uint8_t *data; /* dims[0] * ... * dims[ndim-1] bytes, malloc'ed */
    size_t size;
};

/* Read the IDX file at `path`, gzip'ed or plain, which must have `ndim`
 * dimensions (3 for images, 1 for labels). Every dimension must be non-zero
 * and below 2^20, the payload below 2 GiB and exactly as long as the header
 * says. Returns DLB_ERR_IO when the file cannot be opened or read,
 * DLB_ERR_INPUT when its content is wrong, DLB_ERR_NOMEM; the message names
 * the file. On failure *out is zeroed. */
dlb_status dlb_idx_read(const char *path, uint32_t ndim, struct dlb_idx *out,
                        struct dlb_error *err);

void dlb_idx_free(struct dlb_idx *x);

#endif
