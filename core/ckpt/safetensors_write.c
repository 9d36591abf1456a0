/* Writing safetensors files: the header built as a JSON tree, then the
 * bytes, to a temporary file that is renamed over the target. */
#include "ckpt/safetensors.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/dtype.h"

const char *dlb_st_dtype_name(enum dlb_dtype t)
{
    switch (t) {
    case DLB_F32: return "F32";
    case DLB_F64: return "F64";
    case DLB_F16: return "F16";
    case DLB_BF16: return "BF16";
    case DLB_S8: return "I8";
    case DLB_U8: return "U8";
    case DLB_S32: return "I32";
    }
    return NULL;
}

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static json_t *tensor_json(const struct dlb_st_tensor *t, size_t begin)
{
    json_t *shape = json_array();
    for (unsigned k = 0; k < t->ndim; k++)
        json_array_append_new(shape, json_integer((json_int_t)t->shape[k]));
    return json_pack("{s:s,s:o,s:[I,I]}", "dtype", dlb_st_dtype_name(t->dtype),
                     "shape", shape, "data_offsets", (json_int_t)begin,
                     (json_int_t)(begin + t->bytes));
}

static dlb_status check_tensor(const char *path, const struct dlb_st_tensor *t,
                               struct dlb_error *err)
{
    uint64_t count = 1;
    if (!dlb_st_dtype_name(t->dtype) || t->ndim > DLB_ST_MAX_DIMS)
        return dlb_errorf(err, DLB_ERR_INTERNAL, "%s: tensor '%s': cannot be "
                          "written (type or rank)", path, t->name);
    for (unsigned k = 0; k < t->ndim; k++)
        count *= t->shape[k];
    if (count * dlb_dtype_size(t->dtype) != t->bytes)
        return dlb_errorf(err, DLB_ERR_INTERNAL, "%s: tensor '%s': %zu bytes "
                          "do not match its shape", path, t->name, t->bytes);
    return DLB_OK;
}

/* The header text, padded with spaces so that the data starts 8-aligned. */
static char *header_text(const struct dlb_st_tensor *t, size_t n,
                         const struct dlb_st_kv *meta, size_t n_meta,
                         size_t *len)
{
    json_t *root = json_object(), *md = n_meta ? json_object() : NULL;
    size_t off = 0;
    for (size_t i = 0; i < n; off += t[i].bytes, i++)
        json_object_set_new(root, t[i].name, tensor_json(&t[i], off));
    for (size_t i = 0; i < n_meta; i++)
        json_object_set_new(md, meta[i].key, json_string(meta[i].value));
    if (md)
        json_object_set_new(root, "__metadata__", md);
    char *text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!text)
        return NULL;
    size_t raw = strlen(text), padded = (raw + 7) / 8 * 8;
    char *out = realloc(text, padded + 1);
    if (!out) {
        free(text);
        return NULL;
    }
    memset(out + raw, ' ', padded - raw);
    out[padded] = '\0';
    *len = padded;
    return out;
}

static int write_all(FILE *f, const char *header, size_t hlen,
                     const struct dlb_st_tensor *t, size_t n)
{
    unsigned char le[8];
    for (int k = 0; k < 8; k++)
        le[k] = (unsigned char)((uint64_t)hlen >> (8 * k));
    if (fwrite(le, 1, 8, f) != 8 || fwrite(header, 1, hlen, f) != hlen)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (t[i].bytes && fwrite(t[i].data, 1, t[i].bytes, f) != t[i].bytes)
            return -1;
    if (fflush(f) != 0 || fsync(fileno(f)) != 0)
        return -1;
    return 0;
}

dlb_status dlb_st_write(const char *path, const struct dlb_st_tensor *t,
                        size_t n, const struct dlb_st_kv *meta, size_t n_meta,
                        struct dlb_error *err)
{
    char tmp[4096];
    size_t hlen = 0;
    dlb_status s;
    if (!host_is_little_endian())
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "%s: writing safetensors "
                          "needs a little-endian host", path);
    for (size_t i = 0; i < n; i++)
        if ((s = check_tensor(path, &t[i], err)) != DLB_OK)
            return s;
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >=
        sizeof tmp)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: path too long", path);
    char *header = header_text(t, n, meta, n_meta, &hlen);
    if (!header)
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory building the "
                          "header", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        free(header);
        return dlb_errorf(err, DLB_ERR_IO, "%s: cannot create: %s", tmp,
                          strerror(errno));
    }
    int bad = write_all(f, header, hlen, t, n);
    int saved = errno;
    bad |= fclose(f) != 0;
    free(header);
    if (bad || rename(tmp, path) != 0) {
        saved = bad ? saved : errno;
        unlink(tmp);
        return dlb_errorf(err, DLB_ERR_IO, "%s: cannot write: %s", path,
                          strerror(saved));
    }
    return DLB_OK;
}
