#include "plan/plan_workloads.h"

#include <string.h>

const char *const dlb_builtin_workload_names[] = {"cnn", NULL};

int dlb_is_builtin_workload(const char *name)
{
    for (size_t i = 0; dlb_builtin_workload_names[i]; i++)
        if (!strcmp(dlb_builtin_workload_names[i], name))
            return 1;
    return 0;
}
