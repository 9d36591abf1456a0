/* Initializers into the layers' weights: the shape each layer needs,
 * checked, in the layout dlbench keeps (PyTorch's: conv out x in/groups x
 * k x k, linear out x in). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/onnx_impl.h"

static void dims_text(char *buf, size_t len, const int64_t *d, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < n && at + 24 < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s%lld", k ? "x" : "",
                               (long long)d[k]);
    if (n == 0)
        snprintf(buf, len, "a scalar");
}

dlb_status onnx_weight(struct onnx_map *m, const struct dlb_layer_spec *L,
                       const char *suffix, const Onnx__TensorProto *t,
                       unsigned ndim, const uint64_t *shape, int transpose)
{
    char what[160], have[96], want[96];
    int64_t w[4];
    int ok = t->n_dims == ndim;
    for (unsigned k = 0; k < ndim; k++) {
        w[k] = (int64_t)shape[transpose ? ndim - 1 - k : k];
        ok = ok && t->dims[k] == w[k];
    }
    snprintf(what, sizeof what, "initializer '%.100s'", t->name ? t->name : "");
    if (!ok) {
        dims_text(have, sizeof have, t->dims, t->n_dims);
        dims_text(want, sizeof want, w, ndim);
        return onnx_fail(m, DLB_ERR_INPUT, "%s is %s but the layer's %s needs "
                         "%s", what, have, suffix, want);
    }
    float *v = NULL;
    size_t n;
    struct dlb_error e = { "" };
    if (dlb_onnx_tensor_floats(&m->o, t, what, &v, &n, &e) != DLB_OK)
        return onnx_fail(m, DLB_ERR_INPUT, "%s", onnx_why(m, e.msg));
    if (transpose) {
        float *tr = malloc(n * sizeof *tr + 1);
        if (!tr) {
            free(v);
            return onnx_fail(m, DLB_ERR_NOMEM, "out of memory");
        }
        size_t rows = shape[1], cols = shape[0]; /* stored rows x cols */
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++)
                tr[c * rows + r] = v[r * cols + c];
        free(v);
        v = tr;
    }
    char name[96];
    snprintf(name, sizeof name, "%s.%s", L->name, suffix);
    if (dlb_model_weights_add(m->spec->weights, name, ndim, shape, v, &e))
        return onnx_fail(m, DLB_ERR_NOMEM, "%s", e.msg);
    return DLB_OK;
}

dlb_status onnx_scalar(struct onnx_map *m, const Onnx__TensorProto *t,
                       const char *role, double *out)
{
    char what[160];
    struct dlb_error e = { "" };
    float *v = NULL;
    int64_t *iv = NULL;
    size_t n = 0;
    dlb_status s;
    snprintf(what, sizeof what, "the %s '%.100s'", role, t->name ? t->name : "");
    if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ||
        t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32) {
        s = dlb_onnx_tensor_ints(&m->o, t, what, &iv, &n, &e);
        if (s == DLB_OK && n == 1)
            *out = (double)iv[0];
    } else {
        s = dlb_onnx_tensor_floats(&m->o, t, what, &v, &n, &e);
        if (s == DLB_OK && n == 1)
            *out = v[0];
    }
    free(v);
    free(iv);
    if (s != DLB_OK)
        return onnx_fail(m, s, "%s", onnx_why(m, e.msg));
    if (n != 1)
        return onnx_fail(m, DLB_ERR_INPUT, "%s has %zu values; expected one",
                         what, n);
    return DLB_OK;
}
