/* Test plugin: sets a hook point (transform) but no init. Expected: the
 * loader refuses it with "sets the transform hook point but has no init".
 * Bug it guards against: hooks called with a state nobody created. */
#include <dlbench/plugin.h>

static dlb_status no_init_apply(void *state, const struct dlb_host *h,
                                struct dlb_model *model)
{
    (void)state;
    (void)h;
    (void)model;
    return DLB_OK;
}

static const struct dlb_transform_hooks no_init_transform = {
    .apply = no_init_apply,
};

static const struct dlb_plugin no_init_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "no_init",
    .version = "1.0",
    .summary = "test: hook point without init",
    .transform = &no_init_transform,
};

DLB_PLUGIN_DEFINE(no_init_plugin)
