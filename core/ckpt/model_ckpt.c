/* A model's tensors to and from safetensors checkpoints, named as in a
 * PyTorch state dict ("conv1.weight", "bn1.running_var"). */
#include "ckpt/model_ckpt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/dtype.h"

static void shape_text(const uint64_t *shape, unsigned ndim, char *buf,
                       size_t len)
{
    size_t at = 0;
    at += (size_t)snprintf(buf, len, "[");
    for (unsigned k = 0; k < ndim && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s%llu", k ? ", " : "",
                               (unsigned long long)shape[k]);
    if (at < len)
        snprintf(buf + at, len - at, "]");
}

dlb_status dlb_model_save(struct dlb_model *m, const char *path,
                          const struct dlb_st_kv *meta, size_t n_meta,
                          struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(dlb_model_backend(m));
    size_t n = dlb_model_n_tensors(m), total = 0, off = 0;
    size_t esz = dlb_dtype_size(dlb_model_dtype(m));
    dlb_status s = DLB_OK;
    for (size_t i = 0; i < n; i++)
        total += dlb_model_tensor_at(m, i)->count * esz;
    struct dlb_st_tensor *t = calloc(n + 1, sizeof *t);
    unsigned char *bytes = malloc(total + 1);
    if (!t || !bytes) {
        free(t);
        free(bytes);
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", path);
    }
    for (size_t i = 0; i < n && s == DLB_OK; i++) {
        const struct dlb_model_tensor *mt = dlb_model_tensor_at(m, i);
        t[i].name = mt->name;
        t[i].dtype = dlb_model_dtype(m);
        t[i].ndim = mt->ndim;
        memcpy(t[i].shape, mt->shape, sizeof mt->shape);
        t[i].bytes = mt->count * esz;
        t[i].data = bytes + off;
        s = ops->copy_to_host(dlb_model_backend(m), bytes + off, mt->buf, 0,
                              t[i].bytes);
        if (s != DLB_OK)
            s = dlb_errorf(err, s, "%s: tensor '%s': reading it from the "
                           "device: %s", path, mt->name,
                           dlb_backend_last_error(dlb_model_backend(m)));
        off += t[i].bytes;
    }
    if (s == DLB_OK)
        s = dlb_st_write(path, t, n, meta, n_meta, err);
    free(t);
    free(bytes);
    return s;
}

/* Every model tensor must be in the file with the model's type and shape,
 * and the file must hold nothing else. */
static dlb_status match(const struct dlb_model *m, const struct dlb_st_file *f,
                        struct dlb_error *err)
{
    char want[96], got[96];
    enum dlb_dtype dt = dlb_model_dtype(m);
    for (size_t i = 0; i < dlb_model_n_tensors(m); i++) {
        const struct dlb_model_tensor *mt = dlb_model_tensor_at(m, i);
        const struct dlb_st_tensor *t = dlb_st_find(f, mt->name);
        if (!t)
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: tensor '%s' is missing "
                              "(model %s)", f->path, mt->name,
                              dlb_model_spec_of(m)->path);
        if (t->dtype != dt)
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: tensor '%s' has dtype "
                              "%s; the model needs %s", f->path, mt->name,
                              dlb_st_dtype_name(t->dtype), dlb_st_dtype_name(dt));
        shape_text(mt->shape, mt->ndim, want, sizeof want);
        shape_text(t->shape, t->ndim, got, sizeof got);
        if (strcmp(want, got) != 0)
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: tensor '%s' has shape "
                              "%s; the model needs %s", f->path, mt->name, got,
                              want);
    }
    for (size_t i = 0; i < f->n; i++) {
        int known = 0;
        for (size_t j = 0; j < dlb_model_n_tensors(m) && !known; j++)
            known = !strcmp(dlb_model_tensor_at(m, j)->name, f->tensors[i].name);
        if (!known)
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: tensor '%s' is not part "
                              "of model %s", f->path, f->tensors[i].name,
                              dlb_model_spec_of(m)->path);
    }
    return DLB_OK;
}

dlb_status dlb_model_load(struct dlb_model *m, const char *path,
                          struct dlb_st_file *file_out, struct dlb_error *err)
{
    struct dlb_backend *be = dlb_model_backend(m);
    struct dlb_st_file f;
    dlb_status s = dlb_st_read(path, &f, err);
    if (s != DLB_OK)
        return s;
    if ((s = match(m, &f, err)) != DLB_OK) {
        dlb_st_free(&f);
        return s;
    }
    for (size_t i = 0; i < dlb_model_n_tensors(m) && s == DLB_OK; i++) {
        const struct dlb_model_tensor *mt = dlb_model_tensor_at(m, i);
        const struct dlb_st_tensor *t = dlb_st_find(&f, mt->name);
        s = dlb_backend_ops_of(be)->copy_from_host(be, mt->buf, 0, t->data,
                                                   t->bytes);
        if (s != DLB_OK)
            s = dlb_errorf(err, s, "%s: tensor '%s': writing it to the device: "
                           "%s", path, mt->name, dlb_backend_last_error(be));
    }
    dlb_model_weights_changed(m);
    if (file_out && s == DLB_OK)
        *file_out = f;
    else
        dlb_st_free(&f);
    return s;
}
