/* The quant plugin's settings and the calibration run (quant_run.c). */
#ifndef DLB_QUANT_H
#define DLB_QUANT_H

#include <dlbench/plugin.h>

#include "quant_calib.h"

struct quant_settings {
    int per_channel;          /* weights: one scale per output channel */
    int u8;                   /* activations: u8 asymmetric, else s8 */
    enum qc_method method;
    double percentile;        /* (0, 100] */
    uint32_t calib_images;
    uint32_t calib_batch;
    double averaging;         /* moving_minmax's constant */
};

/* Calibrate `m` on training images, quantise it (model_api's rewrite) and
 * record the figures (accuracy before and after, sizes, per-layer SQNR,
 * calibration time) through h->metric. */
dlb_status quant_run(const struct quant_settings *qs, const struct dlb_host *h,
                     struct dlb_model *m);

#endif
