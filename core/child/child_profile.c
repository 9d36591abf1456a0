#include "child/child_profile.h"

#include <stdlib.h>
#include <string.h>

void dlb_child_profile_begin(struct dlb_backend *be)
{
    if (be)
        dlb_backend_fewer_flops_reset(be);
    if (be && dlb_backend_profiling(be))
        dlb_backend_profile_reset(be);
}

void dlb_child_profile_end(struct dlb_backend *be, struct dlb_child_profile *p)
{
    const struct dlb_op_profile *ops;
    if (be)
        p->fewer_flops = dlb_backend_fewer_flops(be);
    if (!be || !dlb_backend_profiling(be))
        return;
    size_t n = dlb_backend_profile(be, &ops);
    dlb_child_profile_free(p);
    p->ops = n ? malloc(n * sizeof *p->ops) : NULL;
    p->n = p->ops ? n : 0;
    /* The labels copied too: the record is written after the backend
     * (and the model that named the operations) is closed. */
    for (size_t i = 0; i < p->n; i++) {
        p->ops[i] = ops[i];
        if (ops[i].label)
            p->ops[i].label = strdup(ops[i].label); /* NULL: no label */
    }
    p->taken = 1;
}

json_t *dlb_child_profile_json(const struct dlb_child_profile *p, double steps,
                               double step_s)
{
    if (!p->taken || !(steps > 0))
        return NULL;
    json_t *ops = json_array();
    double total = 0;
    for (size_t i = 0; ops && i < p->n; i++) {
        const struct dlb_op_profile *e = &p->ops[i];
        double per = e->seconds / steps;
        total += per;
        json_t *o = json_pack("{s:s?,s:s,s:s,s:s,s:f,s:f}", "layer", e->label,
                              "op", dlb_op_kind_name(e->kind),
                              "prop", dlb_prop_name(e->prop), "kernel", e->kernel,
                              "calls_per_step", (double)e->calls / steps,
                              "time_per_step_s", per);
        if (o && step_s > 0)
            json_object_set_new(o, "share", json_real(per / step_s));
        json_array_append_new(ops, o);
    }
    return ops ? json_pack("{s:f,s:f,s:o}", "steps", steps, "per_step_s", total,
                           "ops", ops)
               : NULL;
}

void dlb_child_profile_free(struct dlb_child_profile *p)
{
    for (size_t i = 0; i < p->n; i++)
        free((char *)p->ops[i].label);
    free(p->ops);
    p->ops = NULL;
    p->n = 0;
}
