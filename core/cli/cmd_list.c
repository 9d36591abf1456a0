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

/* The suites found, each once: the first directory that has NAME.ini
 * wins, as `--suite NAME` takes it (./suites, $DLBENCH_SUITE_PATH, the
 * installed ones). */
struct suite_entry {
    char name[256], desc[400], path[4096];
};
struct suite_list {
    struct suite_entry *v;
    size_t n, cap;
};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct suite_entry *)a)->name,
                  ((const struct suite_entry *)b)->name);
}

/* The description line of the suite file at path ("" when none). */
static void read_desc(const char *path, char *desc, size_t n)
{
    char line[512];
    FILE *f = fopen(path, "r");
    desc[0] = '\0';
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "description", 11) && strchr(line, '=')) {
            char *v = strchr(line, '=') + 1;
            v += strspn(v, " \t");
            v[strcspn(v, "\n")] = '\0';
            snprintf(desc, n, "%s", v);
            break;
        }
    fclose(f);
}

static void collect_suites_in(struct suite_list *l, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name), i;
        if (len < 5 || len - 4 >= sizeof l->v->name ||
            strcmp(e->d_name + len - 4, ".ini") != 0)
            continue;
        for (i = 0; i < l->n; i++)
            if (strlen(l->v[i].name) == len - 4 &&
                !strncmp(l->v[i].name, e->d_name, len - 4))
                break;
        if (i < l->n)
            continue; /* an earlier directory's file is the one taken */
        if (l->n == l->cap) {
            size_t cap = l->cap ? 2 * l->cap : 32;
            struct suite_entry *v = realloc(l->v, cap * sizeof *v);
            if (!v)
                break;
            l->v = v;
            l->cap = cap;
        }
        struct suite_entry *s = &l->v[l->n++];
        snprintf(s->name, sizeof s->name, "%.*s", (int)(len - 4), e->d_name);
        snprintf(s->path, sizeof s->path, "%s/%s", dir, e->d_name);
        read_desc(s->path, s->desc, sizeof s->desc);
    }
    closedir(d);
}

static void list_suites(void)
{
    struct suite_list l = {NULL, 0, 0};
    collect_suites_in(&l, "suites");
    const char *sp = getenv("DLBENCH_SUITE_PATH");
    if (sp) {
        char *copy = strdup(sp), *save = NULL;
        for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d;
             d = strtok_r(NULL, ":", &save))
            collect_suites_in(&l, d);
        free(copy);
    }
    collect_suites_in(&l, dlb_installed_suite_dir());
    if (l.n)
        qsort(l.v, l.n, sizeof *l.v, by_name);
    int w = 12;
    for (size_t i = 0; i < l.n; i++)
        if ((int)strlen(l.v[i].name) > w)
            w = (int)strlen(l.v[i].name);
    for (size_t i = 0; i < l.n; i++)
        printf("  %-*s %s (%s)\n", w, l.v[i].name, l.v[i].desc, l.v[i].path);
    free(l.v);
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
    list_suites();
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
