/* The ONNX protobuf into a ModelProto, and tensor data out of it. Raw
 * data is little-endian, as ONNX stores it and as the hosts dlbench runs
 * on are. */
#include "model/onnx_read.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ONNX raw tensor data is little-endian; this reader copies it as is"
#endif

/* Far beyond any CNN's tensor, small enough that byte counts never
 * overflow. */
#define MAX_ELEMS ((size_t)1 << 32)

dlb_status dlb_onnx_read(const char *name, const uint8_t *buf, size_t len,
                         const char *dir, struct dlb_onnx *o,
                         struct dlb_error *err)
{
    memset(o, 0, sizeof *o);
    o->name = name;
    if (len == 0)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: empty file; expected an "
                          "ONNX model", name);
    o->model = onnx__model_proto__unpack(NULL, len, buf);
    if (!o->model)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: not an ONNX model (the "
                          "protobuf does not parse: a truncated file or "
                          "another format)", name);
    const Onnx__GraphProto *g = o->model->graph;
    dlb_status s = DLB_OK;
    if (!g || g->n_node == 0)
        s = dlb_errorf(err, DLB_ERR_INPUT, "%s: not an ONNX model (it has no "
                       "graph of nodes)", name);
    o->opset = -1;
    for (size_t i = 0; s == DLB_OK && i < o->model->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *op = o->model->opset_import[i];
        const char *d = op->domain ? op->domain : "";
        if (!*d || !strcmp(d, "ai.onnx"))
            o->opset = op->has_version ? op->version : 1;
    }
    if (s == DLB_OK && o->opset < 0)
        s = dlb_errorf(err, DLB_ERR_INPUT, "%s: the model imports no opset of "
                       "the default ONNX domain; dlbench reads opsets %d to %d",
                       name, DLB_ONNX_OPSET_MIN, DLB_ONNX_OPSET_MAX);
    else if (s == DLB_OK && (o->opset < DLB_ONNX_OPSET_MIN ||
                             o->opset > DLB_ONNX_OPSET_MAX))
        s = dlb_errorf(err, DLB_ERR_INPUT, "%s: opset %lld is not supported; "
                       "dlbench reads opsets %d to %d (export with "
                       "opset_version=%d)", name, (long long)o->opset,
                       DLB_ONNX_OPSET_MIN, DLB_ONNX_OPSET_MAX, 17);
    if (s == DLB_OK && dir && !(o->dir = strdup(dir)))
        s = dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", name);
    if (s != DLB_OK)
        dlb_onnx_close(o);
    return s;
}

void dlb_onnx_close(struct dlb_onnx *o)
{
    if (o->model)
        onnx__model_proto__free_unpacked(o->model, NULL);
    free(o->dir);
    o->model = NULL;
    o->dir = NULL;
}

dlb_status dlb_onnx_tensor_count(const struct dlb_onnx *o,
                                 const Onnx__TensorProto *t, const char *what,
                                 size_t *count, struct dlb_error *err)
{
    size_t n = 1;
    for (size_t k = 0; k < t->n_dims; k++) {
        if (t->dims[k] < 0 || (t->dims[k] > 0 && n > MAX_ELEMS / (size_t)t->dims[k]))
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s has dimension %lld; "
                              "expected 0 to %zu elements in all", o->name,
                              what, (long long)t->dims[k], MAX_ELEMS);
        n *= (size_t)t->dims[k];
    }
    *count = n;
    return DLB_OK;
}

static const char *type_name(int32_t dt)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &onnx__tensor_proto__data_type__descriptor, dt);
    return v ? v->name : "unknown";
}

/* A path under the model's folder: relative, and never climbing out of it
 * (a model file must not read arbitrary files). */
static int safe_location(const char *loc)
{
    if (!*loc || loc[0] == '/')
        return 0;
    for (const char *p = loc; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return 0;
        p += n + (p[n] == '/');
    }
    return 1;
}

/* Parse an external_data value: a decimal byte count. */
static int parse_size(const char *v, unsigned long long *out)
{
    char *end;
    if (!v || *v < '0' || *v > '9')
        return 0;
    errno = 0;
    *out = strtoull(v, &end, 10);
    return errno == 0 && *end == '\0';
}

/* `want` bytes of external data (location, offset, length as the
 * external_data entries say) into a malloc'ed buffer. */
static dlb_status read_external(const struct dlb_onnx *o,
                                const Onnx__TensorProto *t, const char *what,
                                size_t want, uint8_t **out,
                                struct dlb_error *err)
{
    const char *loc = NULL;
    unsigned long long off = 0, len = want;
    int has_len = 0;
    *out = NULL;
    for (size_t i = 0; i < t->n_external_data; i++) {
        const char *k = t->external_data[i]->key, *v = t->external_data[i]->value;
        if (k && !strcmp(k, "location"))
            loc = v;
        else if (k && !strcmp(k, "offset") && !parse_size(v, &off))
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s: external data offset "
                              "'%s' is not a byte count", o->name, what, v ? v : "");
        else if (k && !strcmp(k, "length") && !(has_len = parse_size(v, &len)))
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s: external data length "
                              "'%s' is not a byte count", o->name, what, v ? v : "");
    }
    if (!o->dir)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s keeps its data in an "
                          "external file, which is read only from a model "
                          "loaded from a file", o->name, what);
    if (!loc || !safe_location(loc))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s: external data location "
                          "'%s' is refused; it must be a relative path inside "
                          "the model's folder", o->name, what, loc ? loc : "");
    if (has_len && len != want)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s: external data length %llu "
                          "but its shape needs %zu bytes", o->name, what, len,
                          want);
    size_t plen = strlen(o->dir) + strlen(loc) + 2;
    char *path = malloc(plen);
    uint8_t *data = NULL;
    FILE *f = NULL;
    long size = -1;
    dlb_status s = DLB_OK;
    if (!path) {
        s = dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", o->name);
        goto out;
    }
    snprintf(path, plen, "%s/%s", o->dir, loc);
    if (!(f = fopen(path, "rb")))
        s = dlb_errorf(err, DLB_ERR_INPUT, "%s: %s: external data file %s "
                       "cannot be opened: %s", o->name, what, path,
                       strerror(errno));
    else if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
             off > (unsigned long long)size ||
             want > (unsigned long long)size - off ||
             fseek(f, (long)off, SEEK_SET) != 0)
        s = dlb_errorf(err, DLB_ERR_INPUT, "%s: %s: external data file %s has "
                       "no %zu bytes at offset %llu (%ld bytes in all)",
                       o->name, what, path, want, off, size);
    else if (!(data = malloc(want + 1)))
        s = dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", o->name);
    else if (fread(data, 1, want, f) != want)
        s = dlb_errorf(err, DLB_ERR_INPUT, "%s: %s: external data file %s has "
                       "no %zu bytes at offset %llu (a truncated file?)",
                       o->name, what, path, want, off);
out:
    if (f)
        fclose(f);
    free(path);
    if (s == DLB_OK)
        *out = data;
    else
        free(data);
    return s;
}

/* The tensor's bytes when they are raw (in the file or external), for
 * `esz`-byte elements; *bytes NULL when the data is in the typed field. */
static dlb_status raw_bytes(const struct dlb_onnx *o,
                            const Onnx__TensorProto *t, const char *what,
                            size_t count, size_t esz, const uint8_t **bytes,
                            uint8_t **owned, struct dlb_error *err)
{
    *bytes = NULL;
    *owned = NULL;
    if (t->has_data_location &&
        t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        dlb_status s = read_external(o, t, what, count * esz, owned, err);
        *bytes = *owned;
        return s;
    }
    if (!t->has_raw_data)
        return DLB_OK;
    if (t->raw_data.len != count * esz)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s has %zu bytes of data "
                          "but its shape needs %zu", o->name, what,
                          t->raw_data.len, count * esz);
    *bytes = t->raw_data.data;
    return DLB_OK;
}

static dlb_status typed_count(const struct dlb_onnx *o, const char *what,
                              size_t have, size_t count, struct dlb_error *err)
{
    if (have == count)
        return DLB_OK;
    return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s has %zu values but its shape "
                      "needs %zu", o->name, what, have, count);
}

dlb_status dlb_onnx_tensor_floats(const struct dlb_onnx *o,
                                  const Onnx__TensorProto *t, const char *what,
                                  float **out, size_t *count,
                                  struct dlb_error *err)
{
    int32_t dt = t->has_data_type ? t->data_type : 0;
    int dbl = dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
    const uint8_t *raw;
    uint8_t *owned;
    size_t n;
    dlb_status s;
    *out = NULL;
    if (dt != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && !dbl)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s has data type %s; dlbench "
                          "reads FLOAT and DOUBLE weights", o->name, what,
                          type_name(dt));
    if ((s = dlb_onnx_tensor_count(o, t, what, &n, err)) ||
        (s = raw_bytes(o, t, what, n, dbl ? 8 : 4, &raw, &owned, err)))
        return s;
    if (!raw && (s = typed_count(o, what, dbl ? t->n_double_data
                                              : t->n_float_data, n, err)))
        return s;
    float *v = malloc(n * sizeof *v + 1);
    if (!v) {
        free(owned);
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory for %s",
                          o->name, what);
    }
    for (size_t i = 0; i < n; i++) {
        if (dbl) {
            double d;
            if (raw)
                memcpy(&d, raw + 8 * i, 8);
            else
                d = t->double_data[i];
            v[i] = (float)d;
        } else if (raw) {
            memcpy(&v[i], raw + 4 * i, 4);
        } else {
            v[i] = t->float_data[i];
        }
    }
    free(owned);
    *out = v;
    *count = n;
    return DLB_OK;
}

dlb_status dlb_onnx_tensor_ints(const struct dlb_onnx *o,
                                const Onnx__TensorProto *t, const char *what,
                                int64_t **out, size_t *count,
                                struct dlb_error *err)
{
    int32_t dt = t->has_data_type ? t->data_type : 0;
    /* QDQ models' quantised tensors: INT8 and UINT8 are one byte each in
     * raw data, and live in int32_data otherwise, as INT32 does */
    int i8 = dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT8;
    int u8 = dt == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
    int i32 = dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 || i8 || u8;
    const uint8_t *raw;
    uint8_t *owned;
    size_t n;
    dlb_status s;
    *out = NULL;
    if (dt != ONNX__TENSOR_PROTO__DATA_TYPE__INT64 && !i32)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s has data type %s; "
                          "expected INT64, INT32, INT8 or UINT8", o->name,
                          what, type_name(dt));
    if ((s = dlb_onnx_tensor_count(o, t, what, &n, err)) ||
        (s = raw_bytes(o, t, what, n, i8 || u8 ? 1 : i32 ? 4 : 8, &raw,
                       &owned, err)))
        return s;
    if (!raw && (s = typed_count(o, what, i32 ? t->n_int32_data
                                              : t->n_int64_data, n, err)))
        return s;
    int64_t *v = malloc(n * sizeof *v + 1);
    if (!v) {
        free(owned);
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory for %s",
                          o->name, what);
    }
    for (size_t i = 0; i < n; i++) {
        if (i8 && raw) {
            v[i] = (int8_t)raw[i];
        } else if (u8 && raw) {
            v[i] = raw[i];
        } else if (i32) {
            int32_t x;
            if (raw)
                memcpy(&x, raw + 4 * i, 4);
            else
                x = t->int32_data[i];
            v[i] = x;
        } else if (raw) {
            memcpy(&v[i], raw + 8 * i, 8);
        } else {
            v[i] = t->int64_data[i];
        }
    }
    free(owned);
    *out = v;
    *count = n;
    return DLB_OK;
}
