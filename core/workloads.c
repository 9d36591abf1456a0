#include "workloads.h"

#include <string.h>

/* Built-in workloads, by name. The reference CNN registers here. */
static const struct {
    const char *name;
    const struct dlb_workload_hooks *hooks;
} builtin[] = {
    {"cnn", &dlb_workload_cnn},
    {NULL, NULL}
};

const struct dlb_workload_hooks *dlb_builtin_workload(const char *name)
{
    for (size_t i = 0; builtin[i].name; i++)
        if (!strcmp(builtin[i].name, name))
            return builtin[i].hooks;
    return NULL;
}
