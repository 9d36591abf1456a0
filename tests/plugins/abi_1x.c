/* Test plugin: built for plugin ABI 1.7, the last before the model tables
 * gave way to the one model interface (2.0). Its descriptor has the
 * layout 2.0 keeps, so only the version tells it apart. Expected: the
 * loader refuses it with "was built for plugin ABI 1.7; this dlbench
 * speaks 2.2: rebuild it against dlbench 2.2's headers", naming both
 * versions. Bug it guards against: a 1.x plugin loaded and then calling
 * through a struct dlb_host whose fields moved under it. */
#include <dlbench/plugin.h>

static const struct dlb_plugin abi_1x_plugin = {
    .abi_major = 1,
    .abi_minor = 7,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "abi_1x",
    .version = "1.0",
    .summary = "test: built for plugin ABI 1.7",
};

DLB_PLUGIN_DEFINE(abi_1x_plugin)
