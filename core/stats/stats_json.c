#include "stats/stats_json.h"

#include <math.h>

static json_t *real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *dlb_stats_json(const struct dlb_stats *st)
{
    json_t *o = json_object();
    json_object_set_new(o, "n", json_integer((json_int_t)st->n));
    const struct {
        const char *name;
        double v;
    } f[] = {{"median", st->median}, {"mean", st->mean}, {"stddev", st->stddev},
             {"cv", st->cv}, {"min", st->min}, {"max", st->max}, {"p5", st->p5},
             {"p95", st->p95}, {"p99", st->p99}, {"ci_lo", st->ci_lo},
             {"ci_hi", st->ci_hi}, {"ci_rel_halfwidth", st->ci_rel_halfwidth}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        json_object_set_new(o, f[i].name, real_or_null(f[i].v));
    json_object_set_new(o, "ci_exact", json_boolean(st->ci_exact));
    return o;
}
