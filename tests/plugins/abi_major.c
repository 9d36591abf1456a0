/* Test plugin: built for a plugin ABI major version this dlbench does not
 * have. Expected: the loader refuses it with "was built for plugin ABI
 * 99.0; this dlbench speaks 2.2: rebuild it ...". Bug it guards against: a
 * descriptor of another layout read as if it were ours. */
#include <dlbench/plugin.h>

static const struct dlb_plugin abi_major_plugin = {
    .abi_major = 99,
    .abi_minor = 0,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "abi_major",
    .version = "1.0",
    .summary = "test: wrong ABI major version",
};

DLB_PLUGIN_DEFINE(abi_major_plugin)
