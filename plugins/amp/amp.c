/* amp: mixed-precision training and low-precision inference.
 *
 * The plugin provides the precision hook point: the compute type of each
 * layer kind and a gradient scaler (amp_scaler.c). The model runtime
 * (core/model/) does the work: fp32 master weights cast to low-precision
 * copies once per step, convolutions and linear layers in the low
 * precision, the loss, the softmax, batch-norm statistics and parameters
 * and the SGD step in fp32. In inference mode the core runs the whole
 * forward pass in the compute type of the convolutions, the weights
 * converted once.
 *
 * A precision the backend cannot compute in makes the configuration
 * skipped with the backend's reason (probe); never an fp32 fallback. */
#include <dlbench/plugin.h>

#include <stdio.h>
#include <stdlib.h>

#include "amp_scaler.h"

static const char *const amp_precisions[] = { "fp32", "bf16", "fp16", NULL };
static const char *const amp_scalings[] = { "none", "static", "dynamic", NULL };

enum { AMP_PRECISION, AMP_LOSS_SCALE, AMP_INIT_SCALE, AMP_GROWTH,
       AMP_BACKOFF, AMP_INTERVAL, AMP_MASTER, AMP_N_PARAMS };

/* Index order of amp_precisions. */
static const enum dlb_dtype amp_types[] = { DLB_F32, DLB_BF16, DLB_F16 };

static const struct dlb_param_def amp_params[AMP_N_PARAMS] = {
    [AMP_PRECISION] = {
        .name = "precision", .type = DLB_PARAM_ENUM, .def = "bf16",
        .choices = amp_precisions,
        .help = "compute type of convolutions and linear layers (fp32 is the "
                "baseline: the policy then changes nothing)",
    },
    [AMP_LOSS_SCALE] = {
        .name = "loss_scale", .type = DLB_PARAM_ENUM, .def = "dynamic",
        .choices = amp_scalings,
        .help = "gradient scaling: none, static (init_scale, overflowing "
                "steps skipped) or dynamic (GradScaler's back-off and growth)",
    },
    [AMP_INIT_SCALE] = {
        .name = "init_scale", .type = DLB_PARAM_FLOAT, .def = "65536",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX,
        .min = 1e-7, .max = 1e30,
        .help = "the loss scale at the start (static: the scale); above 0",
    },
    [AMP_GROWTH] = {
        .name = "growth_factor", .type = DLB_PARAM_FLOAT, .def = "2",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 1, .max = 1024,
        .help = "dynamic: the scale is multiplied by this after "
                "growth_interval clean steps (1: never grows)",
    },
    [AMP_BACKOFF] = {
        .name = "backoff_factor", .type = DLB_PARAM_FLOAT, .def = "0.5",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 1e-6, .max = 1,
        .help = "dynamic: the scale is multiplied by this after a step with "
                "inf/NaN gradients, which is skipped",
    },
    [AMP_INTERVAL] = {
        .name = "growth_interval", .type = DLB_PARAM_INT, .def = "2000",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 1, .max = 1e9,
        .unit = "steps",
        .help = "dynamic: clean steps in a row before the scale grows",
    },
    [AMP_MASTER] = {
        .name = "master_weights", .type = DLB_PARAM_BOOL, .def = "on",
        .help = "keep fp32 master weights (off: weights are rounded to the "
                "low precision after every update)",
    },
};

struct amp_state {
    enum dlb_dtype low;
    int master;
    struct dlb_amp_scaler scaler;
};

static dlb_status amp_probe(const struct dlb_host *h, const struct dlb_params *p,
                            char *reason, size_t reason_len)
{
    if (!p || p->count < AMP_N_PARAMS)
        return DLB_ERR_INTERNAL;
    enum dlb_dtype t = amp_types[p->values[AMP_PRECISION].i];
    if (t == DLB_F32)
        return DLB_OK;
    if (!DLB_HOST_HAS(h, backend_supports)) {
        snprintf(reason, reason_len, "precision=%s needs a dlbench core with "
                 "the backend capability query (plugin ABI 1.1)",
                 p->values[AMP_PRECISION].s);
        return DLB_ERR_UNSUPPORTED;
    }
    char why[320] = "";
    dlb_status s = h->backend_supports(h, t, why, sizeof why);
    if (s != DLB_OK)
        snprintf(reason, reason_len, "precision=%s on backend %s: %s",
                 p->values[AMP_PRECISION].s,
                 h->backend_name ? h->backend_name : "?",
                 why[0] ? why : "not supported");
    return s;
}

static dlb_status amp_init(const struct dlb_host *h, const struct dlb_params *p,
                           void **state)
{
    static const enum dlb_amp_scale_mode modes[] = {
        DLB_AMP_SCALE_NONE, DLB_AMP_SCALE_STATIC, DLB_AMP_SCALE_DYNAMIC };
    (void)h;
    if (!p || p->count < AMP_N_PARAMS)
        return DLB_ERR_INTERNAL;
    struct amp_state *s = calloc(1, sizeof *s);
    if (!s)
        return DLB_ERR_NOMEM;
    s->low = amp_types[p->values[AMP_PRECISION].i];
    s->master = p->values[AMP_MASTER].i != 0;
    dlb_amp_scaler_init(&s->scaler, modes[p->values[AMP_LOSS_SCALE].i],
                        (float)p->values[AMP_INIT_SCALE].f,
                        (float)p->values[AMP_GROWTH].f,
                        (float)p->values[AMP_BACKOFF].f,
                        (uint32_t)p->values[AMP_INTERVAL].i);
    *state = s;
    return DLB_OK;
}

static void amp_fini(void *state)
{
    free(state);
}

/* The policy of common frameworks' autocast: the matrix products in the
 * low precision, and the layers between them (pooling, activation,
 * dropout, batch-norm normalisation) in the type of the data they
 * receive, so that no cast pass runs between a convolution and the next;
 * batch-norm statistics and parameters are fp32 on every backend, and the
 * loss (log-softmax + NLL) is fp32. */
static enum dlb_dtype amp_compute_type(void *state, enum dlb_layer_kind kind)
{
    const struct amp_state *s = state;
    return kind == DLB_LAYER_LOGSOFTMAX ? DLB_F32 : s->low;
}

static float amp_loss_scale(void *state)
{
    return dlb_amp_scaler_scale(&((struct amp_state *)state)->scaler);
}

static int amp_after_backward(void *state, int found_nonfinite)
{
    return dlb_amp_scaler_update(&((struct amp_state *)state)->scaler,
                                 found_nonfinite);
}

static void amp_reset(void *state)
{
    dlb_amp_scaler_reset(&((struct amp_state *)state)->scaler);
}

static int amp_master_weights(void *state)
{
    return ((const struct amp_state *)state)->master;
}

static dlb_status amp_metrics(void *state, const struct dlb_host *h)
{
    const struct amp_state *s = state;
    const struct dlb_amp_scaler *sc = &s->scaler;
    dlb_status st;
    /* No backward pass ran (inference): the scaler did nothing, and its
     * initial scale in the report read as a figure of the run. */
    if (sc->steps == 0)
        return DLB_OK;
    if ((st = h->metric(h, "skipped_steps", "steps", (double)sc->skipped)) ||
        (st = h->metric(h, "final_scale", "", (double)sc->scale)) ||
        (st = h->metric(h, "scale_growths", "count", (double)sc->growths)) ||
        (st = h->metric(h, "scale_backoffs", "count", (double)sc->backoffs)))
        return st;
    return h->metric(h, "scaler_steps", "steps", (double)sc->steps);
}

static const struct dlb_precision_hooks amp_precision = {
    .compute_type = amp_compute_type,
    .loss_scale = amp_loss_scale,
    .after_backward = amp_after_backward,
    .reset = amp_reset,
    .master_weights = amp_master_weights,
};

static const struct dlb_plugin amp_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "amp",
    .version = "1.0",
    .summary = "mixed precision: bf16/fp16 compute, fp32 master weights, "
               "loss scaling",
    .params = amp_params,
    .n_params = AMP_N_PARAMS,
    .probe = amp_probe,
    .init = amp_init,
    .fini = amp_fini,
    .precision = &amp_precision,
    .metrics = amp_metrics,
};

DLB_PLUGIN_DEFINE(amp_plugin)
