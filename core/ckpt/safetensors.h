/* Checkpoints in the safetensors format (huggingface/safetensors):
 *
 *   8 bytes    N, the header length, unsigned little-endian
 *   N bytes    a JSON object: for each tensor
 *                "NAME": {"dtype": "F32", "shape": [d0, ...],
 *                         "data_offsets": [begin, end]}
 *              and optionally "__metadata__": {"key": "string value", ...};
 *              padded with spaces
 *   the rest   the tensors' bytes, little-endian, row-major; offsets are
 *              relative to the start of this section, which they cover
 *              exactly: no holes, no overlaps, nothing after the last.
 *
 * Files are written to a temporary name and renamed, so a reader never sees
 * half a checkpoint. Reading validates everything before it returns, and
 * each error names the file and, where one is at fault, the tensor. */
#ifndef DLB_CORE_MODEL_SAFETENSORS_H
#define DLB_CORE_MODEL_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/plugin.h>

#include "util/error.h"

#define DLB_ST_MAX_DIMS 8
/* The format's own limit on the header, which also bounds what a corrupt
 * length can make the reader allocate. */
#define DLB_ST_MAX_HEADER (100u * 1024u * 1024u)

struct dlb_st_tensor {
    const char *name;
    enum dlb_dtype dtype;
    unsigned ndim;
    uint64_t shape[DLB_ST_MAX_DIMS];
    const void *data;   /* write: the caller's bytes; read: into the file */
    size_t bytes;
};

/* A "__metadata__" entry. */
struct dlb_st_kv {
    const char *key, *value;
};

/* A checkpoint read into memory. */
struct dlb_st_file {
    char *path;
    struct dlb_st_tensor *tensors;  /* in the order of their offsets */
    size_t n;
    struct dlb_st_kv *meta;
    size_t n_meta;
    void *priv;                     /* the header and data, owned */
};

/* "F32", "BF16", "I8" ... as the format names dlb types; NULL if none. */
const char *dlb_st_dtype_name(enum dlb_dtype t);

/* Write `n` tensors (bytes must equal the element count times the type's
 * size) and the metadata to `path` through `path`.tmp.PID and a rename. */
dlb_status dlb_st_write(const char *path, const struct dlb_st_tensor *t,
                        size_t n, const struct dlb_st_kv *meta, size_t n_meta,
                        struct dlb_error *err);

/* Read and validate `path`. On failure *out is empty and err says which
 * rule the file breaks ("FILE: tensor 'fc1.weight': data_offsets [0, 12]
 * hold 12 bytes, dtype F32 and shape [50, 320] need 64000"). */
dlb_status dlb_st_read(const char *path, struct dlb_st_file *out,
                       struct dlb_error *err);
/* The metadata alone (n is 0, no tensors): the header is read and its
 * "__metadata__" checked, the tensors' bytes are not read. */
dlb_status dlb_st_read_meta(const char *path, struct dlb_st_file *out,
                            struct dlb_error *err);
void dlb_st_free(struct dlb_st_file *f);

/* The tensor or metadata value called `name`, or NULL. */
const struct dlb_st_tensor *dlb_st_find(const struct dlb_st_file *f,
                                        const char *name);
const char *dlb_st_meta(const struct dlb_st_file *f, const char *key);

#endif
