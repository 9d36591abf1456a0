/* Shapes over the graph of a network: each layer's input shape is its
 * first input's output shape (an add checks that all its inputs agree),
 * then its own output shape, parameters and FLOPs follow from its keys.
 * Inputs name earlier layers, so one pass in file order sees every
 * producer before its consumers. */
#include "model/model_file.h"

#include <stdarg.h>
#include <stdio.h>

struct shp {
    const char *file;
    dlb_status st;
    struct dlb_error *err;
};

static dlb_status fail(struct shp *m, int line, dlb_status s, const char *fmt,
                       ...) __attribute__((format(printf, 4, 5)));

static dlb_status fail(struct shp *m, int line, dlb_status s, const char *fmt,
                       ...)
{
    char what[768];
    va_list ap;
    if (m->st != DLB_OK)
        return m->st; /* keep the first error */
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    m->st = s;
    return dlb_errorf(m->err, s, "%s:%d: %s", m->file, line, what);
}

static dlb_status shape_window(struct shp *m, struct dlb_layer_spec *L,
                               const char *what)
{
    uint32_t ph = L->in_h + 2 * L->pad, pw = L->in_w + 2 * L->pad;
    if (L->size > ph || L->size > pw)
        return fail(m, L->line, DLB_ERR_INPUT, "layer '%s': %s %u larger than "
                    "padded input %ux%u", L->name, what, L->size, ph, pw);
    L->out_h = dlb_conv_out_size(L->in_h, L->size, L->stride, L->pad);
    L->out_w = dlb_conv_out_size(L->in_w, L->size, L->stride, L->pad);
    return DLB_OK;
}

static dlb_status need_spatial(struct shp *m, const struct dlb_layer_spec *L,
                               int flat)
{
    if (flat)
        return fail(m, L->line, DLB_ERR_INPUT, "layer '%s': %s needs a c x h x "
                    "w input but gets %u flat features (it comes after a "
                    "flatten or linear layer)", L->name,
                    dlb_layer_kind_name(L->kind), L->in_c);
    return DLB_OK;
}

/* Fill L's output shape, parameters and FLOPs from its input shape. */
static dlb_status infer_layer(struct shp *m, struct dlb_layer_spec *L, int flat)
{
    double in_elems = (double)L->in_c * L->in_h * L->in_w, out_elems, macs;
    L->out_c = L->in_c;
    L->out_h = L->in_h;
    L->out_w = L->in_w;
    L->flat_out = flat;
    switch (L->kind) {
    case DLB_LAYER_CONV:
        if (need_spatial(m, L, flat) || shape_window(m, L, "kernel"))
            return m->st;
        if (L->groups == 0)
            L->groups = 1; /* a spec made in code */
        if (L->in_c % L->groups || L->filters % L->groups)
            return fail(m, L->line, DLB_ERR_INPUT, "layer '%s': groups = %u "
                        "must divide the %u input channels and the %u "
                        "filters", L->name, L->groups, L->in_c, L->filters);
        L->out_c = L->filters;
        L->params = (uint64_t)L->filters * (L->in_c / L->groups) * L->size *
                        L->size + (L->bias ? L->filters : 0);
        macs = (double)L->out_c * L->out_h * L->out_w *
               (L->in_c / L->groups) * L->size * L->size;
        L->flops_fwd = 2 * macs;
        L->flops_bwd = 4 * macs;
        return DLB_OK;
    case DLB_LAYER_MAXPOOL:
    case DLB_LAYER_AVGPOOL:
        if (need_spatial(m, L, flat))
            return m->st;
        if (L->pad >= L->size)
            return fail(m, L->line, DLB_ERR_INPUT, "layer '%s': pad %u must be "
                        "smaller than the window %u", L->name, L->pad, L->size);
        if (shape_window(m, L, "window"))
            return m->st;
        out_elems = (double)L->out_c * L->out_h * L->out_w;
        L->flops_fwd = out_elems * L->size * L->size;
        L->flops_bwd = L->kind == DLB_LAYER_MAXPOOL ? out_elems : L->flops_fwd;
        return DLB_OK;
    case DLB_LAYER_RELU:
        L->flops_fwd = L->flops_bwd = in_elems;
        return DLB_OK;
    case DLB_LAYER_DROPOUT:
        if (L->mode == DLB_DROPOUT_CHANNEL && need_spatial(m, L, flat))
            return m->st;
        L->flops_fwd = L->flops_bwd = in_elems;
        return DLB_OK;
    case DLB_LAYER_BATCHNORM:
        L->params = 2 * (uint64_t)L->in_c;
        L->flops_fwd = L->flops_bwd = 4 * in_elems;
        return DLB_OK;
    case DLB_LAYER_LINEAR:
        if (!flat)
            return fail(m, L->line, DLB_ERR_INPUT, "layer '%s': linear needs a "
                        "flat input but gets %ux%ux%u; add a layer with type = "
                        "flatten before it", L->name, L->in_c, L->in_h, L->in_w);
        L->out_c = L->out;
        L->params = (uint64_t)L->out * L->in_c + (L->bias ? L->out : 0);
        macs = (double)L->out * L->in_c;
        L->flops_fwd = 2 * macs;
        L->flops_bwd = 4 * macs;
        return DLB_OK;
    case DLB_LAYER_FLATTEN:
        if ((double)L->in_c * L->in_h * L->in_w > UINT32_MAX)
            return fail(m, L->line, DLB_ERR_INPUT, "layer '%s': %g features "
                        "are too many", L->name, in_elems);
        L->out_c = L->in_c * L->in_h * L->in_w;
        L->out_h = L->out_w = 1;
        L->flat_out = 1;
        return DLB_OK;
    case DLB_LAYER_LOGSOFTMAX:
        if (!flat)
            return fail(m, L->line, DLB_ERR_INPUT, "layer '%s': logsoftmax "
                        "needs a flat input (class scores) but gets %ux%ux%u",
                        L->name, L->in_c, L->in_h, L->in_w);
        L->flops_fwd = L->flops_bwd = 3 * in_elems;
        return DLB_OK;
    case DLB_LAYER_ADD:
        /* one add per element for each input after the first; backward
         * hands the gradient on to every input */
        L->flops_fwd = (L->n_inputs - 1) * in_elems;
        return DLB_OK;
    case DLB_LAYER_CONCAT:
        /* input_shape summed the channels: copies, no arithmetic */
        return need_spatial(m, L, flat);
    case DLB_LAYER_GLOBAL_AVGPOOL:
        if (need_spatial(m, L, flat))
            return m->st;
        L->out_h = L->out_w = 1;
        L->flops_fwd = L->flops_bwd = in_elems;
        return DLB_OK;
    case DLB_LAYER_KIND_COUNT:
        break;
    }
    return fail(m, L->line, DLB_ERR_INTERNAL, "layer '%s': unknown kind",
                L->name);
}


/* "net" or the producing layer's name. */
static const char *input_name(const struct dlb_model_spec *spec, int32_t j)
{
    return j == DLB_LAYER_INPUT ? "net" : spec->layers[j].name;
}

/* L's input shape from its inputs: all of an add's must agree; a
 * concatenation's agree but in channels, which it sums. */
static dlb_status input_shape(struct shp *m, const struct dlb_model_spec *spec,
                              struct dlb_layer_spec *L, int *flat)
{
    for (uint32_t k = 0; k < L->n_inputs; k++) {
        int32_t j = L->inputs[k];
        const struct dlb_layer_spec *P = j >= 0 ? &spec->layers[j] : NULL;
        uint32_t c = P ? P->out_c : spec->in_c, h = P ? P->out_h : spec->in_h,
                 w = P ? P->out_w : spec->in_w;
        int f = P ? P->flat_out : 0;
        if (k == 0) {
            L->in_c = c, L->in_h = h, L->in_w = w;
            *flat = f;
        } else if (L->kind == DLB_LAYER_CONCAT) {
            if (h != L->in_h || w != L->in_w || f != *flat)
                return fail(m, L->line, DLB_ERR_INPUT, "layer '%s': input '%s' "
                            "is %ux%u but '%s' is %ux%u; a concat joins "
                            "channels of one height and width", L->name,
                            input_name(spec, j), h, w,
                            input_name(spec, L->inputs[0]), L->in_h, L->in_w);
            L->in_c += c;
        } else if (c != L->in_c || h != L->in_h || w != L->in_w || f != *flat) {
            return fail(m, L->line, DLB_ERR_INPUT, "layer '%s': input '%s' is "
                        "%ux%ux%u but '%s' is %ux%ux%u; an add takes inputs "
                        "of one shape", L->name, input_name(spec, j), c, h, w,
                        input_name(spec, L->inputs[0]), L->in_c, L->in_h,
                        L->in_w);
        }
    }
    return DLB_OK;
}

dlb_status dlb_model_layer_infer(struct dlb_model_spec *spec, size_t i,
                                 struct dlb_error *err)
{
    struct shp m = { .file = spec->path, .err = err };
    struct dlb_layer_spec *L = &spec->layers[i];
    int flat = 0;
    /* A spec written in code may leave the graph out: the chain. */
    if (L->n_inputs == 0) {
        L->n_inputs = 1;
        L->inputs[0] = (int32_t)i - 1;
    }
    for (uint32_t k = 0; k < L->n_inputs; k++)
        if (L->inputs[k] < DLB_LAYER_INPUT || L->inputs[k] >= (int32_t)i)
            return fail(&m, L->line, DLB_ERR_INTERNAL, "layer '%s': input %d "
                        "is not an earlier layer", L->name, (int)L->inputs[k]);
    int joins = L->kind == DLB_LAYER_ADD || L->kind == DLB_LAYER_CONCAT;
    if (joins ? L->n_inputs < 2 : L->n_inputs != 1)
        return fail(&m, L->line, DLB_ERR_INPUT, "layer '%s': %s takes %s, "
                    "'input' names %u", L->name, dlb_layer_kind_name(L->kind),
                    joins ? "two or more inputs" : "one input", L->n_inputs);
    L->params = 0; /* infer_layer sets only what a kind has */
    L->flops_fwd = L->flops_bwd = 0;
    L->n_uses = 0;
    if (input_shape(&m, spec, L, &flat) || infer_layer(&m, L, flat))
        return m.st;
    for (uint32_t k = 0; k < L->n_inputs; k++)
        if (L->inputs[k] >= 0)
            spec->layers[L->inputs[k]].n_uses++;
    spec->params += L->params;
    spec->flops_fwd += L->flops_fwd;
    spec->flops_bwd += L->flops_bwd;
    return DLB_OK;
}

dlb_status dlb_model_spec_check_uses(const struct dlb_model_spec *spec,
                                     struct dlb_error *err)
{
    struct shp m = { .file = spec->path, .err = err };
    for (size_t i = 0; i + 1 < spec->n_layers; i++)
        if (spec->layers[i].n_uses == 0)
            return fail(&m, spec->layers[i].line, DLB_ERR_INPUT, "layer '%s': "
                        "no later layer reads its output; name it in a later "
                        "layer's 'input' or remove it", spec->layers[i].name);
    return DLB_OK;
}

dlb_status dlb_model_spec_reshape(struct dlb_model_spec *spec,
                                  struct dlb_error *err)
{
    dlb_status s = DLB_OK;
    spec->params = 0;
    spec->flops_fwd = spec->flops_bwd = 0;
    for (size_t i = 0; i < spec->n_layers && s == DLB_OK; i++)
        s = dlb_model_layer_infer(spec, i, err);
    return s == DLB_OK ? dlb_model_spec_check_uses(spec, err) : s;
}

int dlb_model_spec_is_chain(const struct dlb_model_spec *spec)
{
    for (size_t i = 0; i < spec->n_layers; i++) {
        const struct dlb_layer_spec *L = &spec->layers[i];
        if (L->n_inputs > 1 || (L->n_inputs == 1 &&
                                L->inputs[0] != (int32_t)i - 1) ||
            L->n_uses > 1)
            return 0;
    }
    return 1;
}

int dlb_model_spec_feeds_next(const struct dlb_model_spec *spec, size_t i)
{
    const struct dlb_layer_spec *N;
    if (i + 1 >= spec->n_layers || spec->layers[i].n_uses != 1)
        return 0;
    N = &spec->layers[i + 1];
    return N->n_inputs == 1 && N->inputs[0] == (int32_t)i;
}

size_t dlb_model_spec_cut_reader(const struct dlb_model_spec *spec, size_t k)
{
    for (size_t i = k; i < spec->n_layers; i++)
        for (uint32_t j = 0; j < spec->layers[i].n_inputs; j++)
            if (spec->layers[i].inputs[j] + 1 < (int32_t)k)
                return i;
    return spec->n_layers;
}
