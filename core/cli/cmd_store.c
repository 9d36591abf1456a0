/* `dlbench store add DB RUNDIR...` and `dlbench store info DB`. */
#include "cli/hist_args.h"

#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "store/store.h"

static int has_results(const char *dir)
{
    char p[4200];
    struct stat sb;
    snprintf(p, sizeof p, "%.4096s/results.json", dir);
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* PATH's runs: PATH itself (a run directory or a results.json), or each
 * run directory in it (results/SUITE/), in name order. */
static dlb_status expand(const char *path, char ***v, size_t *n, struct dlb_error *err)
{
    struct stat sb;
    char **found = NULL;
    size_t k = 0;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) && !has_results(path)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char sub[4096];
            if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) >= (int)sizeof sub)
                continue;
            if (e->d_name[0] == '.' || !has_results(sub))
                continue;
            char **g = realloc(found, (k + 1) * sizeof *g);
            if (!g || !(g[k] = strdup(sub))) {
                free(g ? g : found);
                closedir(d);
                return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
            }
            found = g;
            k++;
        }
        if (d)
            closedir(d);
        if (k)
            qsort(found, k, sizeof *found, by_name);
    }
    if (!k && !(found = malloc(sizeof *found)))
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    if (!k && !(found[k++] = strdup(path))) {
        free(found);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    char **all = realloc(*v, (*n + k) * sizeof *all);
    if (!all) {
        for (size_t i = 0; i < k; i++)
            free(found[i]);
        free(found);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    memcpy(all + *n, found, k * sizeof *found);
    free(found);
    *v = all;
    *n += k;
    return DLB_OK;
}

static int store_add(struct dlb_hist_args *a)
{
    if (a->n_pos < 3) {
        fprintf(stderr, "dlbench: store add: expected DB RUNDIR..., e.g. dlbench store "
                "add results.db results/baseline/*/\n");
        return 2;
    }
    const char *where = a->pos[1];
    struct dlb_error err = {""};
    struct dlb_store_labels labels = {a->machine, a->commit};
    char **paths = NULL;
    size_t n_paths = 0;
    dlb_status s = DLB_OK;
    for (size_t i = 2; i < a->n_pos && s == DLB_OK; i++)
        s = expand(a->pos[i], &paths, &n_paths, &err);
    struct dlb_store_run *runs = s == DLB_OK ? calloc(n_paths + 1, sizeof *runs) : NULL;
    if (s == DLB_OK && !runs)
        s = dlb_errorf(&err, DLB_ERR_NOMEM, "out of memory");
    size_t loaded = 0;
    /* Every run read and checked before the store is touched: bad input
     * adds nothing. */
    for (; s == DLB_OK && loaded < n_paths; loaded++)
        if ((s = dlb_store_run_load(paths[loaded], &labels, &runs[loaded], &err)) != DLB_OK)
            break;
    struct dlb_store *st = NULL;
    struct dlb_store_added added = {0, 0, 0, 0};
    if (s == DLB_OK)
        s = dlb_store_open(where, DLB_DB_CREATE, &st, &err);
    if (s == DLB_OK)
        s = dlb_store_add(st, runs, loaded, &added, &err);
    if (s == DLB_OK) {
        for (size_t i = 0; i < loaded; i++)
            if (!strcmp(runs[i].commit, "unknown"))
                fprintf(stderr, "dlbench: warning: %s: no commit recorded; give "
                        "--commit SHA so that change points name commits\n", runs[i].file);
        if (a->format == DLB_HIST_JSON) {
            json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I}", "store",
                                  dlb_db_where(st->db), "runs_added",
                                  (json_int_t)added.runs_added, "runs_known",
                                  (json_int_t)added.runs_known, "rows_added",
                                  (json_int_t)added.rows_added, "rows_known",
                                  (json_int_t)added.rows_known);
            json_dumpf(j, stdout, JSON_INDENT(2));
            fputc('\n', stdout);
            json_decref(j);
        } else
            printf("%s: %lld run%s added (%lld configuration rows), %lld known already "
                   "(%lld rows)\n", dlb_db_where(st->db), added.runs_added,
                   added.runs_added == 1 ? "" : "s", added.rows_added, added.runs_known,
                   added.rows_known);
    }
    for (size_t i = 0; i < loaded; i++)
        dlb_store_run_free(&runs[i]);
    free(runs);
    for (size_t i = 0; i < n_paths; i++)
        free(paths[i]);
    free(paths);
    dlb_store_close(st);
    if (s != DLB_OK) {
        fprintf(stderr, "dlbench: store add: %s; nothing was added\n", err.msg);
        return 2;
    }
    return 0;
}

static int store_info(struct dlb_hist_args *a)
{
    if (a->n_pos != 2) {
        fprintf(stderr, "dlbench: store info: expected DB, e.g. dlbench store info "
                "results.db\n");
        return 2;
    }
    struct dlb_error err = {""};
    struct dlb_store *st = NULL;
    struct dlb_store_info in;
    memset(&in, 0, sizeof in);
    dlb_status s = dlb_store_open(a->pos[1], DLB_DB_EXISTING, &st, &err);
    if (s == DLB_OK)
        s = dlb_store_info(st, &in, &err);
    if (s == DLB_OK && a->format == DLB_HIST_JSON) {
        json_t *j = json_pack("{s:s, s:s, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s?, s:s?}",
            "store", dlb_db_where(st->db), "engine", dlb_db_engine(st->db),
            "schema_version", st->version, "runs", (json_int_t)in.runs,
            "rows", (json_int_t)in.rows, "series", (json_int_t)in.series,
            "suites", (json_int_t)in.suites, "machines", (json_int_t)in.machines,
            "commits", (json_int_t)in.commits, "alerts_open", (json_int_t)in.alerts_open,
            "first_utc", in.first_utc, "last_utc", in.last_utc);
        json_dumpf(j, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
        json_decref(j);
    } else if (s == DLB_OK) {
        printf("%s (%s, schema version %d)\n  runs %lld, configuration rows %lld, "
               "series %lld\n  suites %lld, machines %lld, commits %lld\n  first run "
               "%s, last run %s\n  open alerts %lld\n", dlb_db_where(st->db),
               dlb_db_engine(st->db), st->version, in.runs, in.rows, in.series, in.suites,
               in.machines, in.commits, in.first_utc ? in.first_utc : "-",
               in.last_utc ? in.last_utc : "-", in.alerts_open);
    }
    dlb_store_info_free(&in);
    dlb_store_close(st);
    if (s != DLB_OK) {
        fprintf(stderr, "dlbench: store info: %s\n", err.msg);
        return 2;
    }
    return 0;
}

int dlb_cmd_store(struct dlb_hist_args *a)
{
    const char *sub = a->n_pos ? a->pos[0] : NULL;
    if (sub && !strcmp(sub, "add"))
        return store_add(a);
    if (sub && !strcmp(sub, "info"))
        return store_info(a);
    fprintf(stderr, "dlbench: store: expected add DB RUNDIR... or info DB%s%s%s\n",
            sub ? " (not '" : "", sub ? sub : "", sub ? "')" : "");
    return 2;
}
