/* libFuzzer harness: suite files (core/suite*.c, core/param*.c,
 * core/util/ini_lines.c) and the plan built from them (core/plan/plan.c), plain and
 * under --quick. Plugins are two static descriptors whose parameters cover
 * every parameter type; nothing is dlopen'ed. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_file.h"
#include "suite/param.h"
#include "plan/plan.h"
#include "suite/suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const modes[] = {"none", "segv", "hang", NULL};

static const struct dlb_param_def load_params[] = {
    {.name = "work", .type = DLB_PARAM_INT, .def = "200", .flags = DLB_PARAM_HAS_MIN,
     .min = 1, .help = "iterations"},
    {.name = "fault", .type = DLB_PARAM_ENUM, .def = "none", .choices = modes,
     .help = "fault"},
    {.name = "scale", .type = DLB_PARAM_FLOAT, .def = "0.5",
     .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 0, .max = 1, .help = "scale"},
    {.name = "pool", .type = DLB_PARAM_SIZE, .def = "4K", .help = "bytes"},
    {.name = "pause", .type = DLB_PARAM_TIME, .def = "1ms", .help = "time"},
    {.name = "tag", .type = DLB_PARAM_STRING, .def = "x", .flags = DLB_PARAM_NO_SWEEP,
     .help = "tag"},
    {.name = "fast", .type = DLB_PARAM_BOOL, .def = "off", .help = "flag"},
};

static const struct dlb_workload_hooks no_hooks;

static const struct dlb_plugin load_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR, .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin), .name = "load", .version = "1",
    .summary = "fuzz workload", .params = load_params,
    .n_params = sizeof load_params / sizeof load_params[0], .workload = &no_hooks,
};

static const struct dlb_plugin bare_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR, .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin), .name = "bare", .version = "1",
    .summary = "a plugin without parameters",
};

static dlb_status lookup(void *ctx, const char *name, const struct dlb_plugin **out,
                         struct dlb_error *err)
{
    (void)ctx;
    if (!strcmp(name, "load")) {
        *out = &load_plugin;
        return DLB_OK;
    }
    if (!strcmp(name, "bare")) {
        *out = &bare_plugin;
        return DLB_OK;
    }
    return dlb_errorf(err, DLB_ERR_INPUT, "unknown plugin '%s'", name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_file f;
    if (fuzz_file_open(&f, data, size) != 0)
        return 0;
    struct dlb_suite s;
    struct dlb_error err = {""};
    if (dlb_suite_load(f.path, lookup, NULL, &s, &err) == DLB_OK) {
        static char set0[] = "seed=7";
        char *sets[] = {set0};
        for (int quick = 0; quick <= 1; quick++) {
            struct dlb_overrides ov = {sets, (size_t)quick, quick};
            struct dlb_plan p;
            if (dlb_plan_build(&s, &ov, &p, &err) == DLB_OK) {
                volatile size_t sum = 0;
                for (size_t i = 0; i < p.n; i++)
                    sum += strlen(p.configs[i].id) +
                           (size_t)p.configs[i].core.batch;
                (void)sum;
                dlb_plan_free(&p);
            }
        }
        dlb_suite_free(&s);
    }
    fuzz_file_close(&f);
    return 0;
}
