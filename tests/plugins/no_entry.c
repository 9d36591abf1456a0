/* Test plugin: a shared object without dlb_plugin_entry (its entry point
 * has a near-miss name). Expected: "no symbol dlb_plugin_entry; is it a
 * dlbench plugin?". Link it without an export list restricted to
 * dlb_plugin_entry: such a list would be empty here, which GNU ld rejects. */
#include <dlbench/plugin.h>

static const struct dlb_plugin no_entry_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "no_entry",
    .version = "1.0",
    .summary = "test: misspelt entry point",
};

__attribute__((visibility("default"))) const struct dlb_plugin *
dlb_plugin_entry_v0(void);

const struct dlb_plugin *dlb_plugin_entry_v0(void)
{
    return &no_entry_plugin;
}
