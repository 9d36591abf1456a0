/* Test plugin: the descriptor's name differs from the file name
 * (wrong_name.so says it is "right_name"). Expected: the loader refuses it,
 * naming both. Bug it guards against: a renamed file running under a name
 * the suite did not ask for. */
#include <dlbench/plugin.h>

static const struct dlb_plugin wrong_name_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "right_name",
    .version = "1.0",
    .summary = "test: name differs from file name",
};

DLB_PLUGIN_DEFINE(wrong_name_plugin)
