/* Whether a comparison rests on a doubtful record: a figure measured
 * while something else kept preempting the process (or the hypervisor
 * took its CPUs) says as much about the neighbours as about the code, so
 * a verdict, a winner or a speedup built on it must say so where it is
 * printed, not only in the report's notes. */
#include <stdio.h>

#include "select/select_impl.h"

static const char *reason_of(const struct dlb_sel_item *it)
{
    return it && it->r.has_system ? it->r.system.doubtful : NULL;
}

int dlb_sel_doubtful(const struct dlb_sel_item *it, const struct dlb_sel_item *base,
                     char *why, size_t len)
{
    const struct dlb_sel_item *at = reason_of(it) ? it : reason_of(base) ? base : NULL;
    why[0] = '\0';
    if (!at)
        return 0;
    snprintf(why, len, "%s%s: %s", at == base && at != it ? "its baseline " : "",
             at->r.id ? at->r.id : "?", reason_of(at));
    return 1;
}

const char *dlb_sel_doubtful_why(struct dlb_strpool *pool,
                                 const struct dlb_sel_item *it,
                                 const struct dlb_sel_item *base)
{
    char why[400];
    return dlb_sel_doubtful(it, base, why, sizeof why)
               ? dlb_strpool_add(pool, why) : NULL;
}
