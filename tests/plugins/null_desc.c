/* Test plugin: the entry point returns NULL instead of a descriptor.
 * Expected: "dlb_plugin_entry returned NULL instead of a descriptor". Bug it
 * guards against: the loader reading the ABI fields through NULL. */
#include <dlbench/plugin.h>

__attribute__((visibility("default"))) const struct dlb_plugin *dlb_plugin_entry(void);

const struct dlb_plugin *dlb_plugin_entry(void)
{
    return NULL;
}
