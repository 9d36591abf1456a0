#include "child/workloads.h"

#include <string.h>

#include "plan/plan_workloads.h"

/* The hooks of each of dlb_builtin_workload_names, in its order. */
static const struct dlb_workload_hooks *const builtin_hooks[] = {
    &dlb_workload_cnn,
};

const struct dlb_workload_hooks *dlb_builtin_workload(const char *name)
{
    size_t n = sizeof builtin_hooks / sizeof builtin_hooks[0];
    for (size_t i = 0; i < n && dlb_builtin_workload_names[i]; i++)
        if (!strcmp(dlb_builtin_workload_names[i], name))
            return builtin_hooks[i];
    return NULL;
}
