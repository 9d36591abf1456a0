/* null: the baseline. It provides no hook point and no parameter, so a
 * configuration that enables it runs exactly as one that enables nothing;
 * suites name it to give the baseline a row of its own in the results. */
#include <dlbench/plugin.h>

static const struct dlb_plugin null_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "null",
    .version = "1.0",
    .summary = "no optimization: the baseline",
};

DLB_PLUGIN_DEFINE(null_plugin)
