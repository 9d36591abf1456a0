/* Reading safetensors files with every rule of the format checked before
 * anything is returned: a corrupt or foreign checkpoint is an error that
 * names the file and the tensor, never a crash or garbage weights. */
#include "ckpt/safetensors.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend/dtype.h"

struct st_priv {
    json_t *header;
    unsigned char *data;
};

static int dtype_of(const char *name, enum dlb_dtype *out)
{
    static const enum dlb_dtype all[] = {DLB_F32, DLB_F64, DLB_F16, DLB_BF16,
                                         DLB_S8, DLB_U8, DLB_S32};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!strcmp(name, dlb_st_dtype_name(all[i]))) {
            *out = all[i];
            return 0;
        }
    return -1;
}

static dlb_status bad(struct dlb_error *err, const char *path, const char *what,
                      const char *fmt, const char *detail)
    __attribute__((format(printf, 4, 0)));

/* fmt takes at most one %s, the detail. */
static dlb_status bad(struct dlb_error *err, const char *path, const char *what,
                      const char *fmt, const char *detail)
{
    char msg[600];
    snprintf(msg, sizeof msg, fmt, detail);
    if (what)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: tensor '%s': %s", path, what,
                          msg);
    return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s", path, msg);
}

static dlb_status parse_shape(const char *path, const char *name, json_t *js,
                              struct dlb_st_tensor *t, struct dlb_error *err)
{
    size_t k;
    json_t *v;
    if (!json_is_array(js) || json_array_size(js) > DLB_ST_MAX_DIMS)
        return bad(err, path, name, "shape is not an array of at most 8 "
                   "dimensions%s", "");
    t->ndim = (unsigned)json_array_size(js);
    json_array_foreach(js, k, v) {
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return bad(err, path, name, "shape holds a value that is not a "
                       "non-negative integer%s", "");
        t->shape[k] = (uint64_t)json_integer_value(v);
    }
    return DLB_OK;
}

/* One header entry into t; begin/end are its offsets. */
static dlb_status parse_tensor(const char *path, const char *name, json_t *js,
                               size_t data_bytes, struct dlb_st_tensor *t,
                               uint64_t *begin, struct dlb_error *err)
{
    json_t *dt = json_object_get(js, "dtype"), *off;
    uint64_t need, end;
    char msg[256];
    dlb_status s;
    t->name = name;
    if (!json_is_object(js))
        return bad(err, path, name, "entry is not an object%s", "");
    if (!json_is_string(dt) || dtype_of(json_string_value(dt), &t->dtype))
        return bad(err, path, name, "unknown or missing dtype %s (known: F32, "
                   "F64, F16, BF16, I8, U8, I32)",
                   json_is_string(dt) ? json_string_value(dt) : "(none)");
    if ((s = parse_shape(path, name, json_object_get(js, "shape"), t, err)))
        return s;
    off = json_object_get(js, "data_offsets");
    if (!json_is_array(off) || json_array_size(off) != 2 ||
        !json_is_integer(json_array_get(off, 0)) ||
        !json_is_integer(json_array_get(off, 1)) ||
        json_integer_value(json_array_get(off, 0)) < 0 ||
        json_integer_value(json_array_get(off, 1)) < 0)
        return bad(err, path, name, "data_offsets is not a pair of "
                   "non-negative integers%s", "");
    *begin = (uint64_t)json_integer_value(json_array_get(off, 0));
    end = (uint64_t)json_integer_value(json_array_get(off, 1));
    if (*begin > end)
        return bad(err, path, name, "data_offsets end before they begin "
                   "(the pair is [begin, end])%s", "");
    if (end > data_bytes) {
        snprintf(msg, sizeof msg, "[%llu, %llu] is outside the %zu bytes of "
                 "data", (unsigned long long)*begin, (unsigned long long)end,
                 data_bytes);
        return bad(err, path, name, "data_offsets %s", msg);
    }
    need = dlb_dtype_size(t->dtype);
    for (unsigned k = 0; k < t->ndim; k++) {
        if (t->shape[k] && need > UINT64_MAX / t->shape[k])
            return bad(err, path, name, "shape is too large%s", "");
        need *= t->shape[k];
    }
    if (need != end - *begin) {
        snprintf(msg, sizeof msg, "[%llu, %llu] hold %llu bytes; dtype %s and "
                 "its shape need %llu", (unsigned long long)*begin,
                 (unsigned long long)end, (unsigned long long)(end - *begin),
                 dlb_st_dtype_name(t->dtype), (unsigned long long)need);
        return bad(err, path, name, "data_offsets %s", msg);
    }
    t->bytes = (size_t)need;
    return DLB_OK;
}

static dlb_status parse_meta(const char *path, json_t *js, struct dlb_st_file *f,
                             struct dlb_error *err)
{
    const char *key;
    json_t *v;
    if (!json_is_object(js))
        return bad(err, path, NULL, "__metadata__ is not an object%s", "");
    f->meta = calloc(json_object_size(js) + 1, sizeof *f->meta);
    if (!f->meta)
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", path);
    json_object_foreach(js, key, v) {
        if (!json_is_string(v))
            return bad(err, path, NULL, "__metadata__ value '%s' is not a "
                       "string", key);
        f->meta[f->n_meta].key = key;
        f->meta[f->n_meta++].value = json_string_value(v);
    }
    return DLB_OK;
}

/* Sort by begin offset (insertion sort: checkpoints hold few tensors),
 * then require the offsets to tile the data section exactly. */
static dlb_status check_tiling(const char *path, struct dlb_st_file *f,
                               uint64_t *begin, size_t data_bytes,
                               struct dlb_error *err)
{
    char msg[200];
    for (size_t i = 1; i < f->n; i++)
        for (size_t j = i; j > 0 && begin[j - 1] > begin[j]; j--) {
            struct dlb_st_tensor t = f->tensors[j];
            uint64_t b = begin[j];
            f->tensors[j] = f->tensors[j - 1], begin[j] = begin[j - 1];
            f->tensors[j - 1] = t, begin[j - 1] = b;
        }
    uint64_t at = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (begin[i] != at) {
            snprintf(msg, sizeof msg, "data_offsets start at %llu where the "
                     "previous tensor ends at %llu (%s)",
                     (unsigned long long)begin[i], (unsigned long long)at,
                     begin[i] < at ? "overlap" : "hole");
            return bad(err, path, f->tensors[i].name, "%s", msg);
        }
        at += f->tensors[i].bytes;
    }
    if (at != data_bytes) {
        snprintf(msg, sizeof msg, "the tensors cover %llu of the %zu bytes of "
                 "data (trailing bytes or a missing tensor)",
                 (unsigned long long)at, data_bytes);
        return bad(err, path, NULL, "%s", msg);
    }
    return DLB_OK;
}

static dlb_status parse_header(const char *path, struct dlb_st_file *f,
                               size_t data_bytes, struct dlb_error *err)
{
    struct st_priv *p = f->priv;
    const char *key;
    json_t *v;
    dlb_status s = DLB_OK;
    size_t n = json_object_size(p->header);
    uint64_t *begin = calloc(n + 1, sizeof *begin);
    f->tensors = calloc(n + 1, sizeof *f->tensors);
    if (!begin || !f->tensors) {
        free(begin);
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", path);
    }
    json_object_foreach(p->header, key, v) {
        if (!strcmp(key, "__metadata__"))
            s = parse_meta(path, v, f, err);
        else
            s = parse_tensor(path, key, v, data_bytes, &f->tensors[f->n],
                             &begin[f->n], err), f->n++;
        if (s != DLB_OK)
            break;
    }
    if (s == DLB_OK)
        s = check_tiling(path, f, begin, data_bytes, err);
    for (size_t i = 0; s == DLB_OK && i < f->n; i++)
        f->tensors[i].data = p->data + begin[i];
    free(begin);
    return s;
}

/* The whole file into memory, checking the length prefix first; the
 * header alone when `data_bytes` is NULL. */
static dlb_status load(const char *path, FILE *fp, struct dlb_st_file *f,
                       size_t *data_bytes, struct dlb_error *err)
{
    size_t unread;
    int header_only = !data_bytes;
    if (header_only)
        data_bytes = &unread;
    struct st_priv *p = f->priv;
    struct stat st;
    unsigned char le[8];
    uint64_t hlen = 0, size;
    json_error_t je;
    if (fstat(fileno(fp), &st) != 0)
        return dlb_errorf(err, DLB_ERR_IO, "%s: %s", path, strerror(errno));
    size = (uint64_t)st.st_size;
    if (size < 8 || fread(le, 1, 8, fp) != 8)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: %llu bytes is too short for "
                          "a safetensors file (8-byte header length missing)",
                          path, (unsigned long long)size);
    for (int k = 0; k < 8; k++)
        hlen |= (uint64_t)le[k] << (8 * k);
    if (hlen < 2 || hlen > DLB_ST_MAX_HEADER || hlen > size - 8)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: header length %llu is not "
                          "possible in a file of %llu bytes (limit %u): not a "
                          "safetensors file, or truncated", path,
                          (unsigned long long)hlen, (unsigned long long)size,
                          DLB_ST_MAX_HEADER);
    *data_bytes = (size_t)(size - 8 - hlen);
    char *text = malloc((size_t)hlen);
    p->data = header_only ? NULL : malloc(*data_bytes + 1);
    if (!text || (!header_only && !p->data)) {
        free(text);
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", path);
    }
    if (fread(text, 1, (size_t)hlen, fp) != hlen ||
        (!header_only && fread(p->data, 1, *data_bytes, fp) != *data_bytes)) {
        free(text);
        return dlb_errorf(err, DLB_ERR_IO, "%s: short read", path);
    }
    p->header = json_loadb(text, (size_t)hlen, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!p->header)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: header is not valid JSON "
                          "(column %d: %s)", path, je.column, je.text);
    if (!json_is_object(p->header))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: header is not a JSON object",
                          path);
    return DLB_OK;
}

/* The file's header (with its data when `meta_only` is 0) into *out. */
static dlb_status read_file(const char *path, struct dlb_st_file *out,
                            int meta_only, struct dlb_error *err)
{
    size_t data_bytes = 0;
    dlb_status s;
    memset(out, 0, sizeof *out);
    out->priv = calloc(1, sizeof(struct st_priv));
    out->path = strdup(path);
    if (!out->priv || !out->path) {
        dlb_st_free(out);
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", path);
    }
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        s = dlb_errorf(err, errno == ENOENT ? DLB_ERR_INPUT : DLB_ERR_IO,
                       "%s: %s", path, strerror(errno));
        dlb_st_free(out);
        return s;
    }
    s = load(path, fp, out, meta_only ? NULL : &data_bytes, err);
    fclose(fp);
    json_t *meta = json_object_get(((struct st_priv *)out->priv)->header,
                                   "__metadata__");
    if (s == DLB_OK)
        s = !meta_only ? parse_header(path, out, data_bytes, err)
            : meta ? parse_meta(path, meta, out, err) : DLB_OK;
    if (s != DLB_OK)
        dlb_st_free(out);
    return s;
}

dlb_status dlb_st_read(const char *path, struct dlb_st_file *out,
                       struct dlb_error *err)
{
    return read_file(path, out, 0, err);
}

dlb_status dlb_st_read_meta(const char *path, struct dlb_st_file *out,
                            struct dlb_error *err)
{
    return read_file(path, out, 1, err);
}

void dlb_st_free(struct dlb_st_file *f)
{
    struct st_priv *p = f->priv;
    if (p) {
        json_decref(p->header);
        free(p->data);
        free(p);
    }
    free(f->tensors);
    free(f->meta);
    free(f->path);
    memset(f, 0, sizeof *f);
}

const struct dlb_st_tensor *dlb_st_find(const struct dlb_st_file *f,
                                        const char *name)
{
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->tensors[i].name, name))
            return &f->tensors[i];
    return NULL;
}

const char *dlb_st_meta(const struct dlb_st_file *f, const char *key)
{
    for (size_t i = 0; i < f->n_meta; i++)
        if (!strcmp(f->meta[i].key, key))
            return f->meta[i].value;
    return NULL;
}
