/* quant: post-training static int8 quantisation.
 *
 * A model transform: after the reference weights are trained (or loaded
 * from the cache) and before evaluation and the measured inference steps,
 * the plugin calibrates the activations on training images with one of
 * four calibrators, chooses symmetric s8 weight scales per tensor or per
 * output channel, and hands the layers to the core (model_api.h's
 * rewrite), which runs conv and linear layers on the backend's int8 kernels with data
 * kept in int8 between them. Its figures put the speed beside the cost:
 * accuracy before and after, model size, the signal-to-quantisation-
 * noise ratio of each int8 layer's output, and the calibration time.
 *
 * A backend without int8 kernels makes the configuration skipped with the
 * backend's reason (probe); never an fp32 fallback. */
#include <dlbench/plugin.h>
#include <dlbench/model_api.h>

#include <stdio.h>
#include <stdlib.h>

#include "quant.h"

static const char *const q_weights[] = { "per_tensor", "per_channel", NULL };
static const char *const q_acts[] = { "u8", "s8", NULL };
static const char *const q_calibrators[] = { "minmax", "moving_minmax",
                                             "percentile", "entropy", NULL };

enum { Q_WEIGHTS, Q_ACTS, Q_CALIB, Q_PERCENTILE, Q_IMAGES, Q_BATCH,
       Q_AVERAGING, Q_N_PARAMS };

static const struct dlb_param_def q_params[Q_N_PARAMS] = {
    [Q_WEIGHTS] = {
        .name = "weights", .type = DLB_PARAM_ENUM, .def = "per_channel",
        .choices = q_weights,
        .help = "symmetric s8 weight scales: one per tensor or one per "
                "output channel (activations have one scale per tensor)",
    },
    [Q_ACTS] = {
        .name = "activations", .type = DLB_PARAM_ENUM, .def = "u8",
        .choices = q_acts,
        .help = "u8 asymmetric (scale and zero point) or s8 symmetric",
    },
    [Q_CALIB] = {
        .name = "calibrator", .type = DLB_PARAM_ENUM, .def = "entropy",
        .choices = q_calibrators,
        .help = "activation ranges: minmax, moving_minmax (moving average of "
                "batch ranges), percentile, or entropy (KL divergence over a "
                "2048-bin histogram, as TensorRT)",
    },
    [Q_PERCENTILE] = {
        .name = "percentile", .type = DLB_PARAM_FLOAT, .def = "99.99",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_MIN_EXCLUSIVE |
                 DLB_PARAM_HAS_MAX,
        .min = 0, .max = 100, .unit = "%",
        .help = "percentile calibrator: the share of values inside the range",
    },
    [Q_IMAGES] = {
        .name = "calib_images", .type = DLB_PARAM_INT, .def = "512",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 1, .max = 60000,
        .unit = "images",
        .help = "training images the activations are calibrated on (at most "
                "128 under --quick)",
    },
    [Q_BATCH] = {
        .name = "calib_batch", .type = DLB_PARAM_INT, .def = "64",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 1, .max = 4096,
        .unit = "images",
        .help = "images per calibration pass (moving_minmax averages the "
                "ranges of these batches)",
    },
    [Q_AVERAGING] = {
        .name = "averaging", .type = DLB_PARAM_FLOAT, .def = "0.01",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_MIN_EXCLUSIVE |
                 DLB_PARAM_HAS_MAX,
        .min = 0, .max = 1,
        .help = "moving_minmax: range += averaging * (batch range - range), "
                "as PyTorch's MovingAverageMinMaxObserver",
    },
};

static dlb_status q_probe(const struct dlb_host *h, const struct dlb_params *p,
                          char *reason, size_t reason_len)
{
    if (!p || p->count < Q_N_PARAMS)
        return DLB_ERR_INTERNAL;
    if (!h->model_api->extra(h, "quant.observe") ||
        !h->model_api->extra(h, "quant.folded_weights")) {
        snprintf(reason, reason_len, "quant needs a dlbench core with the "
                 "extras quant.observe and quant.folded_weights");
        return DLB_ERR_UNSUPPORTED;
    }
    char why[320] = "";
    enum dlb_dtype t = p->values[Q_ACTS].i == 0 ? DLB_U8 : DLB_S8;
    dlb_status s = h->backend_supports(h, t, why, sizeof why);
    if (s != DLB_OK)
        snprintf(reason, reason_len, "int8 on backend %s: %s",
                 h->backend_name ? h->backend_name : "?",
                 why[0] ? why : "not supported");
    return s;
}

static dlb_status q_init(const struct dlb_host *h, const struct dlb_params *p,
                         void **state)
{
    static const enum qc_method methods[] = { QC_MINMAX, QC_MOVING_MINMAX,
                                              QC_PERCENTILE, QC_ENTROPY };
    (void)h;
    if (!p || p->count < Q_N_PARAMS)
        return DLB_ERR_INTERNAL;
    struct quant_settings *s = calloc(1, sizeof *s);
    if (!s)
        return DLB_ERR_NOMEM;
    s->per_channel = p->values[Q_WEIGHTS].i == 1;
    s->u8 = p->values[Q_ACTS].i == 0;
    s->method = methods[p->values[Q_CALIB].i];
    s->percentile = p->values[Q_PERCENTILE].f;
    s->calib_images = (uint32_t)p->values[Q_IMAGES].i;
    s->calib_batch = (uint32_t)p->values[Q_BATCH].i;
    s->averaging = p->values[Q_AVERAGING].f;
    *state = s;
    return DLB_OK;
}

static void q_fini(void *state)
{
    free(state);
}

static dlb_status q_apply(void *state, const struct dlb_host *h,
                          struct dlb_model *model)
{
    return quant_run(state, h, model);
}

static const struct dlb_transform_hooks q_transform = {
    .apply = q_apply,
};

static const struct dlb_plugin quant_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "quant",
    .version = "1.0",
    .summary = "post-training static int8 quantization: calibrated "
               "activations, s8 weights, int8 conv and linear kernels",
    .params = q_params,
    .n_params = Q_N_PARAMS,
    .probe = q_probe,
    .init = q_init,
    .fini = q_fini,
    .transform = &q_transform,
};

DLB_PLUGIN_DEFINE(quant_plugin)
