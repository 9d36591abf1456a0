/* The gradient scaler of the amp plugin: a small state machine with no
 * dependency on dlbench, so that tests compile it on its own.
 *
 * Dynamic mode follows torch.cuda.amp.GradScaler: the loss is multiplied
 * by `scale` before backward; when the unscaled gradients hold an inf or
 * NaN the optimizer step is skipped, the scale is multiplied by
 * backoff_factor and the count of clean steps restarts; after
 * growth_interval clean steps in a row the scale is multiplied by
 * growth_factor. Static mode keeps init_scale and skips the steps that
 * overflow (an update with inf/NaN would destroy the weights). Mode none
 * scales by 1 and applies every step, as plain training does. */
#ifndef DLB_AMP_SCALER_H
#define DLB_AMP_SCALER_H

#include <stdint.h>

enum dlb_amp_scale_mode { DLB_AMP_SCALE_NONE, DLB_AMP_SCALE_STATIC,
                          DLB_AMP_SCALE_DYNAMIC };

struct dlb_amp_scaler {
    enum dlb_amp_scale_mode mode;
    float init_scale, growth_factor, backoff_factor;
    uint32_t growth_interval;
    /* state */
    float scale;
    uint32_t clean;            /* clean steps since the last change */
    /* figures */
    uint64_t steps, skipped, growths, backoffs;
};

/* Set up in the initial state. growth_interval 0 is taken as 1. */
void dlb_amp_scaler_init(struct dlb_amp_scaler *s, enum dlb_amp_scale_mode mode,
                         float init_scale, float growth_factor,
                         float backoff_factor, uint32_t growth_interval);

/* Back to the initial state: scale, clean-step count and figures. */
void dlb_amp_scaler_reset(struct dlb_amp_scaler *s);

/* The factor to multiply the loss by for the coming step (1 for none). */
float dlb_amp_scaler_scale(const struct dlb_amp_scaler *s);

/* After backward: update the state for a step whose unscaled gradients
 * were (found_nonfinite = 1) or were not finite. Returns 1 when the
 * optimizer step is to be applied, 0 when it is skipped. */
int dlb_amp_scaler_update(struct dlb_amp_scaler *s, int found_nonfinite);

#endif
