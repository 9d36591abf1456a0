/* The gradient scaler's state machine (amp_scaler.h). */
#include "amp_scaler.h"

#include <math.h>

void dlb_amp_scaler_init(struct dlb_amp_scaler *s, enum dlb_amp_scale_mode mode,
                         float init_scale, float growth_factor,
                         float backoff_factor, uint32_t growth_interval)
{
    s->mode = mode;
    s->init_scale = init_scale;
    s->growth_factor = growth_factor;
    s->backoff_factor = backoff_factor;
    s->growth_interval = growth_interval ? growth_interval : 1;
    dlb_amp_scaler_reset(s);
}

void dlb_amp_scaler_reset(struct dlb_amp_scaler *s)
{
    s->scale = s->mode == DLB_AMP_SCALE_NONE ? 1.0f : s->init_scale;
    s->clean = 0;
    s->steps = s->skipped = s->growths = s->backoffs = 0;
}

float dlb_amp_scaler_scale(const struct dlb_amp_scaler *s)
{
    return s->scale;
}

int dlb_amp_scaler_update(struct dlb_amp_scaler *s, int found_nonfinite)
{
    s->steps++;
    if (s->mode == DLB_AMP_SCALE_NONE)
        return 1;
    if (found_nonfinite) {
        s->skipped++;
        s->clean = 0;
        if (s->mode == DLB_AMP_SCALE_DYNAMIC) {
            s->scale *= s->backoff_factor;
            s->backoffs++;
        }
        return 0;
    }
    if (s->mode == DLB_AMP_SCALE_DYNAMIC && ++s->clean >= s->growth_interval) {
        float grown = s->scale * s->growth_factor;
        s->clean = 0;
        /* A scale that grew to infinity would turn every gradient into
         * inf/NaN: stay at the largest finite one instead. */
        if (isfinite(grown) && grown != s->scale) {
            s->scale = grown;
            s->growths++;
        }
    }
    return 1;
}
