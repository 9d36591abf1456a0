/* The named fp32 tensors a model file brings with it. */
#include "model/model_weights.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dlb_model_weights *dlb_model_weights_new(const char *source)
{
    struct dlb_model_weights *w = calloc(1, sizeof *w);
    if (!w || !(w->source = strdup(source ? source : ""))) {
        free(w);
        return NULL;
    }
    w->refs = 1;
    return w;
}

dlb_status dlb_model_weights_add(struct dlb_model_weights *w, const char *name,
                                 unsigned ndim, const uint64_t *shape,
                                 float *data, struct dlb_error *err)
{
    struct dlb_weight *t;
    if (ndim > 4 || strlen(name) >= sizeof t->name) {
        free(data);
        return dlb_errorf(err, DLB_ERR_INTERNAL, "%s: tensor '%s' has a name "
                          "or rank the model cannot hold", w->source, name);
    }
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 16;
        t = realloc(w->t, cap * sizeof *t);
        if (!t) {
            free(data);
            return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory for the "
                              "weights", w->source);
        }
        w->t = t;
        w->cap = cap;
    }
    t = &w->t[w->n++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ndim = ndim;
    t->count = 1;
    for (unsigned k = 0; k < ndim; k++) {
        t->shape[k] = shape[k];
        t->count *= shape[k];
    }
    t->data = data;
    return DLB_OK;
}

const struct dlb_weight *dlb_model_weights_find(
    const struct dlb_model_weights *w, const char *name)
{
    for (size_t i = 0; w && i < w->n; i++)
        if (!strcmp(w->t[i].name, name))
            return &w->t[i];
    return NULL;
}

struct dlb_model_weights *dlb_model_weights_ref(struct dlb_model_weights *w)
{
    if (w)
        atomic_fetch_add(&w->refs, 1);
    return w;
}

void dlb_model_weights_unref(struct dlb_model_weights *w)
{
    if (!w || atomic_fetch_sub(&w->refs, 1) > 1)
        return;
    for (size_t i = 0; i < w->n; i++)
        free(w->t[i].data);
    free(w->t);
    free(w->source);
    free(w);
}
