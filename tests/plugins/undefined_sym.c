/* Test plugin: needs a function nothing provides. Expected: dlopen's
 * "undefined symbol: dlb_no_such_function" with advice to rebuild against
 * the headers, when the plugin is loaded, before any configuration runs.
 * Bug it guards against: a lazy binding that fails mid-measurement. */
#include <stddef.h>

#include <dlbench/plugin.h>

int dlb_no_such_function(const double *x, size_t n, void *out);

static dlb_status us_init(const struct dlb_host *h, const struct dlb_params *p,
                          void **state)
{
    (void)h;
    (void)p;
    *state = NULL;
    return dlb_no_such_function(NULL, 0, NULL) ? DLB_ERR_INTERNAL : DLB_OK;
}

static const struct dlb_plugin undefined_sym_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "undefined_sym",
    .version = "1.0",
    .summary = "test: needs a symbol no library provides",
    .init = us_init,
};

DLB_PLUGIN_DEFINE(undefined_sym_plugin)
