/* Test plugin: struct_size claims a descriptor that ends before the hooks,
 * as a plugin built against a truncated header would. Expected: "short
 * descriptor". Bug it guards against: reading hook pointers past the end of
 * the plugin's struct. */
#include <dlbench/plugin.h>

static const struct dlb_plugin short_desc_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = offsetof(struct dlb_plugin, probe),
    .name = "short_desc",
    .version = "1.0",
    .summary = "test: struct_size too small",
};

DLB_PLUGIN_DEFINE(short_desc_plugin)
