/* Per-step memory and the operation descriptors of each layer. */
#include "model/model_impl.h"

#include <stdlib.h>

#include "backend/backend.h"
#include "backend/dtype.h"

/* The backend's buffer_alloc is the allocator path for now: every step's
 * activations and workspaces are requested anew. When the backend
 * configuration carries the host allocator (alloc/free of struct dlb_host,
 * where a pool plugin sits), these same calls reach the pool. */
dlb_status dlb_model_step_alloc(struct dlb_model *m, enum dlb_dtype dtype,
                                size_t count, const char *what,
                                struct dlb_buffer **out, struct dlb_error *err)
{
    dlb_status s = dlb_backend_ops_of(m->be)->buffer_alloc(m->be, dtype, count,
                                                           out);
    if (s != DLB_OK) {
        *out = NULL;
        return dlb_model_be_fail(m, s, what, "allocating step memory", err);
    }
    return DLB_OK;
}

void dlb_model_step_free(struct dlb_model *m, struct dlb_buffer **b)
{
    if (*b)
        dlb_backend_ops_of(m->be)->buffer_free(m->be, *b);
    *b = NULL;
}

void dlb_model_step_release(struct dlb_model *m)
{
    for (size_t i = 0; i <= m->spec->n_layers; i++) {
        if (m->own[i])
            dlb_model_step_free(m, &m->act[i]);
        m->act[i] = NULL;
        m->own[i] = 0;
    }
    for (size_t i = 0; i < m->spec->n_layers; i++) {
        struct dlb_model_layer *ml = &m->layers[i];
        dlb_model_step_free(m, &ml->ws);
        dlb_model_step_free(m, &ml->save_mean);
        dlb_model_step_free(m, &ml->save_invstd);
        dlb_model_step_free(m, &ml->x_in);
    }
    dlb_model_step_free(m, &m->labels);
}

dlb_status dlb_model_upload_input(struct dlb_model *m, const float *images,
                                  uint32_t n, struct dlb_buffer **out,
                                  struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    size_t count = (size_t)n * dlb_model_act_size(m, 0);
    struct dlb_buffer *tmp = NULL;
    dlb_status s = dlb_model_step_alloc(m, m->dtype, count, "input", out, err);
    if (s != DLB_OK)
        return s;
    if (m->dtype == DLB_F32) {
        s = ops->copy_from_host(m->be, *out, 0, images, count * sizeof(float));
    } else {
        /* Other types convert on the device, as a framework's .to() does. */
        s = dlb_model_step_alloc(m, DLB_F32, count, "input", &tmp, err);
        if (s != DLB_OK)
            return s;
        s = ops->copy_from_host(m->be, tmp, 0, images, count * sizeof(float));
        if (s == DLB_OK)
            s = dlb_backend_run(m->be, &(struct dlb_op){.kind = DLB_OP_CAST,
                    .count = count, .x = tmp, .y = *out});
        dlb_model_step_free(m, &tmp);
    }
    if (s != DLB_OK) {
        dlb_model_step_free(m, out);
        return dlb_model_be_fail(m, s, "input", "upload", err);
    }
    return DLB_OK;
}

struct dlb_conv2d_desc dlb_model_conv_desc(const struct dlb_layer_spec *L,
                                           uint32_t n)
{
    return (struct dlb_conv2d_desc){
        .n = n, .in_c = L->in_c, .in_h = L->in_h, .in_w = L->in_w,
        .out_c = L->out_c, .kh = L->size, .kw = L->size,
        .stride_h = L->stride, .stride_w = L->stride,
        .pad_h = L->pad, .pad_w = L->pad, .out_h = L->out_h, .out_w = L->out_w,
        .groups = L->groups};
}

struct dlb_pool_desc dlb_model_pool_desc(const struct dlb_layer_spec *L,
                                         uint32_t n)
{
    /* a global average pool is one window over the whole plane */
    if (L->kind == DLB_LAYER_GLOBAL_AVGPOOL)
        return (struct dlb_pool_desc){
            .kind = DLB_POOL_AVG, .n = n, .c = L->in_c, .in_h = L->in_h,
            .in_w = L->in_w, .kh = L->in_h, .kw = L->in_w, .stride_h = 1,
            .stride_w = 1, .out_h = 1, .out_w = 1};
    return (struct dlb_pool_desc){
        .kind = L->kind == DLB_LAYER_MAXPOOL ? DLB_POOL_MAX : DLB_POOL_AVG,
        .n = n, .c = L->in_c, .in_h = L->in_h, .in_w = L->in_w,
        .kh = L->size, .kw = L->size, .stride_h = L->stride,
        .stride_w = L->stride, .pad_h = L->pad, .pad_w = L->pad,
        .out_h = L->out_h, .out_w = L->out_w};
}

struct dlb_batchnorm_desc dlb_model_bn_desc(const struct dlb_layer_spec *L,
                                            uint32_t n)
{
    return (struct dlb_batchnorm_desc){
        .n = n, .c = L->in_c, .hw = L->in_h * L->in_w, .eps = L->eps,
        .momentum = L->momentum};
}

struct dlb_dropout_desc dlb_model_drop_desc(const struct dlb_layer_spec *L,
                                            uint32_t n, uint64_t seed)
{
    return (struct dlb_dropout_desc){
        .mode = L->mode, .n = n, .c = L->in_c, .hw = L->in_h * L->in_w,
        .p = L->p, .seed = seed};
}

struct dlb_linear_desc dlb_model_linear_desc(const struct dlb_layer_spec *L,
                                             uint32_t n)
{
    return (struct dlb_linear_desc){.n = n, .in = L->in_c, .out = L->out};
}
