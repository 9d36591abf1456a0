/* Node attributes: lookup, the check that every attribute is one the
 * operator defines (with its type), and the window of Conv and pooling:
 * kernel_shape, strides, pads, dilations and auto_pad onto dlbench's one
 * square window with equal strides and padding. */
#include <stdio.h>
#include <string.h>

#include "model/onnx_impl.h"

/* ---- attributes ---------------------------------------------------- */

const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *n,
                                        const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name))
            return n->attribute[i];
    return NULL;
}

/* Every attribute of the node is one of `known` (NULL-terminated), with
 * the type the operator gives it: a misspelt or newer attribute is an
 * error rather than ignored. */
dlb_status onnx_check_attrs(struct onnx_map *m, const char *const *known,
                              const Onnx__AttributeProto__AttributeType *types)
{
    const Onnx__NodeProto *n = m->node;
    for (size_t i = 0; i < n->n_attribute; i++) {
        const Onnx__AttributeProto *a = n->attribute[i];
        size_t k = 0;
        while (known[k] && (!a->name || strcmp(a->name, known[k])))
            k++;
        if (!known[k])
            return onnx_unsupported(m, "attribute '%.64s' is not supported",
                                    a->name ? a->name : "");
        if (a->type != types[k])
            return onnx_fail(m, DLB_ERR_INPUT, "attribute '%s' has type %d; "
                             "the operator defines it as type %d", known[k],
                             (int)a->type, (int)types[k]);
    }
    return DLB_OK;
}


int64_t onnx_attr_int(const Onnx__NodeProto *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = onnx_attr(n, name);
    return a ? a->i : def;
}

float onnx_attr_float(const Onnx__NodeProto *n, const char *name, float def)
{
    const Onnx__AttributeProto *a = onnx_attr(n, name);
    return a ? a->f : def;
}

int onnx_attr_is(const Onnx__NodeProto *n, const char *name, const char *def,
                   const char *value)
{
    const Onnx__AttributeProto *a = onnx_attr(n, name);
    if (!a)
        return !strcmp(def, value);
    return a->s.len == strlen(value) && !memcmp(a->s.data, value, a->s.len);
}

/* "[2,2]" */
const char *onnx_ints_text(char *buf, size_t len, const int64_t *v, size_t n)
{
    size_t at = (size_t)snprintf(buf, len, "[");
    for (size_t k = 0; k < n && at + 24 < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s%lld", k ? "," : "",
                               (long long)v[k]);
    snprintf(buf + at, len - at, "]");
    return buf;
}

/* ---- windows: Conv, MaxPool, AveragePool ------------------------------- */

/* kernel_shape (or the weight's k x k), strides, pads, dilations and
 * auto_pad onto one square window, equal strides and equal padding on
 * every side, as dlbench's kernels compute them. */
dlb_status onnx_read_window(struct onnx_map *m, int64_t kh, int64_t kw,
                              uint32_t in_h, uint32_t in_w, struct window *w)
{
    const Onnx__NodeProto *n = m->node;
    const Onnx__AttributeProto *a;
    char b[96];
    if ((a = onnx_attr(n, "kernel_shape"))) {
        if (a->n_ints != 2 || (kh > 0 && (a->ints[0] != kh || a->ints[1] != kw)))
            return onnx_fail(m, DLB_ERR_INPUT, "attribute kernel_shape = %s "
                             "does not match a 2-D window%s", onnx_ints_text(b,
                             sizeof b, a->ints, a->n_ints),
                             kh > 0 ? " of the weight's shape" : "");
        kh = a->ints[0], kw = a->ints[1];
    }
    if (kh <= 0)
        return onnx_fail(m, DLB_ERR_INPUT, "needs attribute kernel_shape");
    if (kh != kw || kh > 1024) {
        int64_t k[2] = { kh, kw };
        return onnx_unsupported(m, "attribute kernel_shape = %s is not "
                                "supported (dlbench supports square windows "
                                "up to 1024)", onnx_ints_text(b, sizeof b, k, 2));
    }
    w->size = (uint32_t)kh;
    w->stride = 1;
    w->pad = 0;
    if ((a = onnx_attr(n, "dilations"))) {
        for (size_t k = 0; k < a->n_ints; k++)
            if (a->ints[k] != 1)
                return onnx_unsupported(m, "attribute dilations = %s is not "
                                        "supported (dlbench supports dilations "
                                        "1)", onnx_ints_text(b, sizeof b, a->ints,
                                                        a->n_ints));
    }
    if ((a = onnx_attr(n, "strides"))) {
        if (a->n_ints != 2 || a->ints[0] != a->ints[1] || a->ints[0] < 1 ||
            a->ints[0] > 1024)
            return onnx_unsupported(m, "attribute strides = %s is not "
                                    "supported (dlbench supports one stride "
                                    "from 1 to 1024 for both axes)",
                                    onnx_ints_text(b, sizeof b, a->ints, a->n_ints));
        w->stride = (uint32_t)a->ints[0];
    }
    if (onnx_attr_is(n, "auto_pad", "NOTSET", "SAME_UPPER") ||
        onnx_attr_is(n, "auto_pad", "NOTSET", "SAME_LOWER")) {
        /* out = ceil(in / stride): the total padding of each axis must be
         * even to fall on both sides alike. */
        uint32_t in[2] = { in_h, in_w };
        int64_t tot[2];
        for (int k = 0; k < 2; k++) {
            int64_t out = (in[k] + w->stride - 1) / w->stride;
            tot[k] = (out - 1) * w->stride + w->size - in[k];
            if (tot[k] < 0)
                tot[k] = 0;
        }
        if (tot[0] != tot[1] || tot[0] % 2)
            return onnx_unsupported(m, "attribute auto_pad = SAME_* needs "
                                    "padding %lld x %lld here, which does not "
                                    "split evenly between the sides (dlbench "
                                    "pads all sides alike)", (long long)tot[0],
                                    (long long)tot[1]);
        w->pad = (uint32_t)(tot[0] / 2);
    } else if (!onnx_attr_is(n, "auto_pad", "NOTSET", "NOTSET") &&
               !onnx_attr_is(n, "auto_pad", "NOTSET", "VALID")) {
        return onnx_unsupported(m, "attribute auto_pad = '%.*s' is not "
                                "supported (NOTSET, VALID, SAME_UPPER, "
                                "SAME_LOWER)", (int)onnx_attr(n, "auto_pad")->s.len,
                                (const char *)onnx_attr(n, "auto_pad")->s.data);
    } else if ((a = onnx_attr(n, "pads")) && onnx_attr_is(n, "auto_pad", "NOTSET", "NOTSET")) {
        int same = a->n_ints == 4;
        for (size_t k = 1; same && k < 4; k++)
            same = a->ints[k] == a->ints[0];
        if (!same || a->ints[0] < 0 || a->ints[0] > 1024)
            return onnx_unsupported(m, "attribute pads = %s is not supported "
                                    "(dlbench pads all four sides alike)",
                                    onnx_ints_text(b, sizeof b, a->ints, a->n_ints));
        w->pad = (uint32_t)a->ints[0];
    }
    return DLB_OK;
}

