#include "cli/cmd_list.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "suite/param.h"
#include "peak/peak.h"
#include "results/results.h"
#include "plan/session.h"

static void print_plugin(void *ctx, const char *name, const char *path,
                         const struct dlb_loaded_plugin *p, dlb_status st, const char *why)
{
    (void)ctx;
    if (st == DLB_OK)
        printf("  %-12s available    %s (%s)\n", name, p->desc->summary, path);
    else
        printf("  %-12s unavailable  %s\n", name, why);
}

/* One suite directory: NAME and its description line. */
static void list_suites_in(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".ini") != 0)
            continue;
        char path[4096], line[512], desc[400] = "";
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            while (fgets(line, sizeof line, f))
                if (!strncmp(line, "description", 11) && strchr(line, '=')) {
                    char *v = strchr(line, '=') + 1;
                    v += strspn(v, " \t");
                    v[strcspn(v, "\n")] = '\0';
                    snprintf(desc, sizeof desc, "%s", v);
                    break;
                }
            fclose(f);
        }
        printf("  %-12.*s %s (%s)\n", (int)(len - 4), e->d_name, desc, path);
    }
    closedir(d);
}

int dlb_cmd_list(const struct dlb_options *o)
{
    struct dlb_session s;
    struct dlb_error err = {""};
    memset(&s, 0, sizeof s);
    if (dlb_session_open_registry(&s, o, &err) != DLB_OK) {
        fprintf(stderr, "dlbench: %s\n", err.msg);
        return 2;
    }
    printf("plugins:\n");
    dlb_registry_scan(&s.reg, print_plugin, NULL);
    printf("suites:\n");
    list_suites_in("suites");
    const char *sp = getenv("DLBENCH_SUITE_PATH");
    if (sp) {
        char *copy = strdup(sp), *save = NULL;
        for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
            list_suites_in(d);
        free(copy);
    }
    list_suites_in(dlb_installed_suite_dir());
    printf("backends:\n");
    for (const char *const *b = dlb_backend_names(); *b; b++) {
        char why[256] = "";
        if (dlb_backend_available(*b, why, sizeof why))
            printf("  %-12s available\n", *b);
        else
            printf("  %-12s unavailable  %s\n", *b, why);
    }
    dlb_session_close(&s);
    return 0;
}

/* `plugin-help suite`: the core's own keys, those of [suite] (a plugin
 * cannot be named suite: its section would be the core's). */
static int print_suite_keys(void)
{
    printf("suite: the core's keys, in [suite], [quick] or [sweep], or as "
           "--set KEY=VALUE:\n\n");
    dlb_param_print_help(stdout, dlb_suite_keys, dlb_suite_n_keys);
    return 0;
}

int dlb_cmd_plugin_help(const struct dlb_options *o)
{
    if (!strcmp(o->plugin_name, "suite"))
        return print_suite_keys();
    struct dlb_session s;
    struct dlb_error err = {""};
    const struct dlb_loaded_plugin *p;
    memset(&s, 0, sizeof s);
    if (dlb_session_open_registry(&s, o, &err) != DLB_OK ||
        dlb_registry_load(&s.reg, o->plugin_name, &p, &err) != DLB_OK) {
        fprintf(stderr, "dlbench: %s\n", err.msg);
        dlb_session_close(&s);
        return 2;
    }
    const struct dlb_plugin *d = p->desc;
    printf("%s %s: %s\n(%s)\n\n", d->name, d->version, d->summary, p->path);
    printf("Keys, in a [%s] section or as %s.KEY in [sweep]:\n\n", d->name, d->name);
    static const struct dlb_param_def enable = {
        "enable", DLB_PARAM_BOOL, "on", 0, 0, 0, NULL, NULL,
        "run with this plugin (off: the baseline), e.g. a sweep axis 'enable = off, on'"};
    struct dlb_param_def *all = malloc((d->n_params + 1) * sizeof *all);
    if (!all)
        return 2;
    if (d->n_params)
        memcpy(all, d->params, d->n_params * sizeof *all);
    all[d->n_params] = enable;
    dlb_param_print_help(stdout, all, d->n_params + 1);
    free(all);
    printf("\nHooks:");
    if (d->allocator) printf(" allocator");
    if (d->batch_source) printf(" batch-source");
    if (d->precision) printf(" precision");
    if (d->transform) printf(" transform");
    if (d->executor) printf(" executor");
    if (d->workload) printf(" workload");
    if (d->metrics) printf(" metrics");
    /* ABI 1.3's check: read only where the descriptor reaches it. */
    if (d->struct_size >= offsetof(struct dlb_plugin, check) + sizeof d->check &&
        d->check)
        printf(" check");
    printf("\n");
    dlb_session_close(&s);
    return 0;
}

int dlb_cmd_info(const struct dlb_options *o)
{
    json_t *ctx = dlb_context_collect();
    if (!ctx)
        return 2;
    if (o->peak) {
        struct dlb_peak pk;
        struct dlb_error warn = {""}, err = {""};
        /* Probed now, always: a share of peak holds only against a
         * probe of the same sitting (the cache serves runs). */
        if (dlb_peak_probe(0, &pk, &warn, &err) != DLB_OK) {
            fprintf(stderr, "dlbench: %s\n", err.msg);
            json_decref(ctx);
            return 1;
        }
        if (warn.msg[0])
            fprintf(stderr, "dlbench: warning: %s\n", warn.msg);
        json_object_set_new(ctx, "peak", dlb_peak_to_json(&pk));
    }
    json_t *b = json_object();
    for (const char *const *n = dlb_backend_names(); *n; n++) {
        char why[256] = "";
        int ok = dlb_backend_available(*n, why, sizeof why);
        json_object_set_new(b, *n, ok ? json_pack("{s:b}", "available", 1)
                                      : json_pack("{s:b,s:s}", "available", 0, "reason", why));
    }
    json_object_set_new(ctx, "backends", b);
    json_dumpf(ctx, stdout, JSON_INDENT(2));
    putchar('\n');
    json_decref(ctx);
    return 0;
}
