/* Series out of the store: every ok row, grouped by suite, configuration
 * and machine, each series in the order its runs started. */
#include "store/store.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static int matches(const char *pattern, const char *s)
{
    return !pattern || fnmatch(pattern, s ? s : "", 0) == 0;
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

static void series_free(struct dlb_series *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->pts[i].commit);
        free(s->pts[i].start_utc);
    }
    free(s->pts);
    free(s->suite);
    free(s->config);
    free(s->machine);
}

void dlb_series_set_free(struct dlb_series_set *set)
{
    for (size_t i = 0; set->v && i < set->n; i++)
        series_free(&set->v[i]);
    free(set->v);
    memset(set, 0, sizeof *set);
}

/* Append a point to the last series, opening a new one when the row's
 * suite, configuration or machine differ from it. */
static int push(struct dlb_series_set *set, const struct dlb_db_rows *r, size_t i)
{
    const char *suite = dlb_db_text_at(r, i, 0), *config = dlb_db_text_at(r, i, 1);
    const char *machine = dlb_db_text_at(r, i, 2);
    struct dlb_series *last = set->n ? &set->v[set->n - 1] : NULL;
    if (!last || strcmp(last->suite, suite) || strcmp(last->config, config) ||
        strcmp(last->machine, machine)) {
        struct dlb_series *v = realloc(set->v, (set->n + 1) * sizeof *v);
        if (!v)
            return -1;
        set->v = v;
        last = &v[set->n++];
        memset(last, 0, sizeof *last);
        last->suite = dup_or_empty(suite);
        last->config = dup_or_empty(config);
        last->machine = dup_or_empty(machine);
        if (!last->suite || !last->config || !last->machine)
            return -1;
    }
    struct dlb_point *p = realloc(last->pts, (last->n + 1) * sizeof *p);
    if (!p)
        return -1;
    last->pts = p;
    p = &p[last->n++];
    *p = (struct dlb_point){
        .run_id = dlb_db_int_at(r, i, 3, -1),
        .commit = dup_or_empty(dlb_db_text_at(r, i, 4)),
        .start_utc = dup_or_empty(dlb_db_text_at(r, i, 5)),
        .median_s = dlb_db_real_at(r, i, 6),
        .ci_lo_s = dlb_db_real_at(r, i, 7),
        .ci_hi_s = dlb_db_real_at(r, i, 8),
        .throughput = dlb_db_real_at(r, i, 9),
        .samples = dlb_db_int_at(r, i, 10, -1),
    };
    return p->commit && p->start_utc ? 0 : -1;
}

static int by_series(const void *a, const void *b)
{
    const struct dlb_series *x = a, *y = b;
    int c = strcmp(x->suite, y->suite);
    if (!c)
        c = strcmp(x->config, y->config);
    return c ? c : strcmp(x->machine, y->machine);
}

dlb_status dlb_store_series(struct dlb_store *st, const struct dlb_series_filter *f,
                            struct dlb_series_set *out, struct dlb_error *err)
{
    memset(out, 0, sizeof *out);
    struct dlb_db_rows r;
    dlb_status s = dlb_db_exec(st->db,
        "SELECT runs.suite, results.config, runs.machine, runs.id, runs.commit_sha,"
        " runs.start_utc, results.median_s, results.ci_lo_s, results.ci_hi_s,"
        " results.throughput, results.samples"
        " FROM results JOIN runs ON runs.id = results.run_id"
        " WHERE results.status = 'ok' AND results.median_s > 0"
        " ORDER BY runs.suite, results.config, runs.machine, runs.start_utc, runs.id",
        NULL, 0, &r, err);
    if (s != DLB_OK)
        return s;
    for (size_t i = 0; i < r.n_rows; i++) {
        if (f && (!matches(f->suite, dlb_db_text_at(&r, i, 0)) ||
                  !matches(f->config, dlb_db_text_at(&r, i, 1)) ||
                  !matches(f->machine, dlb_db_text_at(&r, i, 2))))
            continue;
        if (push(out, &r, i) != 0) {
            dlb_db_rows_free(&r);
            dlb_series_set_free(out);
            return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory reading %s",
                              dlb_db_where(st->db));
        }
    }
    dlb_db_rows_free(&r);
    /* In byte order, whatever collation the server sorts text by. */
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, by_series);
    return DLB_OK;
}

static long long count(struct dlb_store *st, const char *sql, dlb_status *s,
                       struct dlb_error *err)
{
    struct dlb_db_rows r;
    if (*s != DLB_OK || (*s = dlb_db_exec(st->db, sql, NULL, 0, &r, err)) != DLB_OK)
        return 0;
    long long n = dlb_db_int_at(&r, 0, 0, 0);
    dlb_db_rows_free(&r);
    return n;
}

dlb_status dlb_store_info(struct dlb_store *st, struct dlb_store_info *out,
                          struct dlb_error *err)
{
    memset(out, 0, sizeof *out);
    dlb_status s = dlb_db_begin_read(st->db, err);
    out->runs = count(st, "SELECT COUNT(*) FROM runs", &s, err);
    out->rows = count(st, "SELECT COUNT(*) FROM results", &s, err);
    out->series = count(st, "SELECT COUNT(*) FROM (SELECT DISTINCT runs.suite,"
                        " results.config, runs.machine FROM results JOIN runs ON"
                        " runs.id = results.run_id) AS s", &s, err);
    out->suites = count(st, "SELECT COUNT(DISTINCT suite) FROM runs", &s, err);
    out->machines = count(st, "SELECT COUNT(DISTINCT machine) FROM runs", &s, err);
    out->commits = count(st, "SELECT COUNT(DISTINCT commit_sha) FROM runs", &s, err);
    out->alerts_open = count(st, "SELECT COUNT(*) FROM alerts WHERE state IN "
                             "('candidate', 'new', 'acknowledged')", &s, err);
    struct dlb_db_rows r;
    if (s == DLB_OK && (s = dlb_db_exec(st->db, "SELECT MIN(start_utc), MAX(start_utc)"
                                        " FROM runs", NULL, 0, &r, err)) == DLB_OK) {
        const char *a = dlb_db_text_at(&r, 0, 0), *b = dlb_db_text_at(&r, 0, 1);
        out->first_utc = a ? strdup(a) : NULL;
        out->last_utc = b ? strdup(b) : NULL;
        dlb_db_rows_free(&r);
    }
    if (s == DLB_OK)
        s = dlb_db_commit(st->db, err);
    else
        dlb_db_rollback(st->db);
    return s;
}

void dlb_store_info_free(struct dlb_store_info *i)
{
    free(i->first_utc);
    free(i->last_utc);
    memset(i, 0, sizeof *i);
}
