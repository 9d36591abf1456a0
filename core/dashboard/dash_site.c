/* The dashboard's site (dashboard.h): index.html and a page per suite,
 * each written under a temporary name and renamed, so a reader never
 * sees half a page. */
#include "dashboard/dash_impl.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct site {
    const struct dlb_dashboard_opts *o;
    const char *where, *title;
    struct dlb_series_set set;
    struct dlb_threshold_rule *rules;
    size_t n_rules;
    struct dlb_change *ch;
    size_t n_ch;
    struct dlb_alert_row *alerts;
    size_t n_alerts;
    char **machines, **suites, **pages;
    size_t n_machines, n_suites;
    char generated[32];
    struct dlb_dashboard_counts counts;
};

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The distinct values of one part of the series, sorted. */
static char **distinct(const struct dlb_series_set *set, int part, size_t *n)
{
    char **v = calloc(set->n + 1, sizeof *v);
    *n = 0;
    for (size_t i = 0; v && i < set->n; i++) {
        char *s = part ? set->v[i].machine : set->v[i].suite;
        size_t k = 0;
        while (k < *n && strcmp(v[k], s))
            k++;
        if (k == *n)
            v[(*n)++] = s;
    }
    if (v && *n > 1)
        qsort(v, *n, sizeof *v, by_str);
    return v;
}

static size_t index_of(char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], s))
            return i;
    return 0;
}

/* A suite's page name: its letters, digits, '.', '-' and '_' (others
 * become '_'), numbered when two suites come out the same. */
static char *page_name(const char *suite, size_t k, char *const *earlier)
{
    char base[200];
    size_t i = 0;
    for (const char *c = suite; *c && i < sizeof base - 1; c++)
        base[i++] = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                    (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' ? *c : '_';
    base[i] = '\0';
    char *name = malloc(sizeof base + 32);
    if (!name)
        return NULL;
    snprintf(name, sizeof base + 32, "suite-%s.html", base);
    for (size_t j = 0; j < k; j++)
        if (!strcmp(earlier[j], name)) {
            snprintf(name, sizeof base + 32, "suite-%s-%zu.html", base, k);
            break;
        }
    return name;
}

static FILE *open_page(const char *dir, const char *name, char *tmp, size_t n)
{
    snprintf(tmp, n, "%s/.%s.tmp", dir, name);
    return fopen(tmp, "w");
}

static dlb_status close_page(FILE *f, const char *dir, const char *name, const char *tmp,
                             struct dlb_error *err)
{
    char final[4096];
    snprintf(final, sizeof final, "%s/%s", dir, name);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, final) != 0) {
        int e = errno;
        unlink(tmp);
        return dlb_errorf(err, DLB_ERR_IO, "cannot write %s: %s", final,
                          strerror(e ? e : EIO));
    }
    return DLB_OK;
}

static void subtitle(struct site *s, char *buf, size_t n, const char *extra)
{
    size_t runs = 0;
    for (size_t i = 0; i < s->set.n; i++)
        runs += s->set.v[i].n;
    snprintf(buf, n, "%s%zu series, %zu point%s, %zu change point%s; generated "
             "%s by dlbench dashboard (E-divisive means, alpha %g)", extra, s->set.n,
             runs, runs == 1 ? "" : "s", s->n_ch, s->n_ch == 1 ? "" : "s",
             s->generated, DLB_CP_ALPHA);
}

static void alerts_table(FILE *f, const struct site *s)
{
    fputs("<h2>Alerts</h2>\n<table id=\"alerts\"><tr><th>alert</th><th>state</th>"
          "<th>direction</th><th>worst ratio</th><th>commits (good..bad)</th><th>first run "
          "after</th><th>series</th><th>note</th></tr>\n", f);
    size_t shown = 0;
    for (size_t i = s->n_alerts; i-- > 0;) {
        const struct dlb_alert_row *a = &s->alerts[i];
        if (a->state == DLB_ALERT_UNCONFIRMED)
            continue;
        shown++;
        const char *state = dlb_alert_state_name(a->state);
        fprintf(f, "<tr class=\"alert\"><td class=\"num\">%lld</td><td class=\"state-%s\">%s"
                "</td><td>", a->id, state, state);
        dlb_html_put(f, a->direction);
        fprintf(f, "</td><td class=\"num\">%.3f</td><td><code title=\"", a->worst_ratio);
        dlb_html_put(f, a->good_commit);
        fputs("..", f);
        dlb_html_put(f, a->bad_commit);
        /* Short commits in the table, the full ones in its tooltip. */
        char good[13], bad[13];
        snprintf(good, sizeof good, "%s", a->good_commit ? a->good_commit : "");
        snprintf(bad, sizeof bad, "%s", a->bad_commit ? a->bad_commit : "");
        fputs("\">", f);
        dlb_html_put(f, good);
        fputs("..", f);
        dlb_html_put(f, bad);
        fputs("</code></td><td>", f);
        dlb_html_put(f, a->bad_utc);
        fputs("</td><td><ul>", f);
        json_t *m = json_loads(a->members ? a->members : "[]", 0, NULL), *v;
        size_t k;
        json_array_foreach(m, k, v) {
            fputs("<li data-machine=\"", f);
            dlb_html_put(f, json_string_value(json_object_get(v, "machine")));
            fputs("\">", f);
            dlb_html_put(f, json_string_value(json_object_get(v, "suite")));
            fputs(": ", f);
            dlb_html_put(f, json_string_value(json_object_get(v, "config")));
            fputs(" [", f);
            dlb_html_put(f, json_string_value(json_object_get(v, "machine")));
            fprintf(f, "] x%.3f</li>", json_number_value(json_object_get(v, "ratio")));
        }
        json_decref(m);
        fputs("</ul></td><td>", f);
        dlb_html_put(f, a->note);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (!shown)
        fputs("<p>No alerts.</p>\n", f);
}

static dlb_status write_index(struct site *s, struct dlb_error *err)
{
    char tmp[4096], sub[1024], head[512] = "store ";
    FILE *f = open_page(s->o->out, "index.html", tmp, sizeof tmp);
    if (!f)
        return dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", tmp, strerror(errno));
    /* The store's name is the user's: escaped into the subtitle. */
    FILE *m = fmemopen(head + 6, sizeof head - 8, "w");
    if (m) {
        dlb_html_put(m, s->where);
        fputs(": ", m);
        fclose(m);
    }
    subtitle(s, sub, sizeof sub, head);
    dlb_dash_head(f, s->title, sub, s->machines, s->n_machines);
    alerts_table(f, s);
    fputs("<h2>Suites</h2>\n<table id=\"suites\"><tr><th>suite</th><th>configurations"
          "</th><th>series</th><th>change points</th><th>last run</th></tr>\n", f);
    for (size_t k = 0; k < s->n_suites; k++) {
        size_t configs = 0, series = 0, cps = 0;
        const char *last = "", *prev_config = NULL;
        for (size_t i = 0; i < s->set.n; i++) {
            const struct dlb_series *r = &s->set.v[i];
            if (strcmp(r->suite, s->suites[k]))
                continue;
            series++;
            configs += !prev_config || strcmp(prev_config, r->config);
            prev_config = r->config;
            if (r->n && strcmp(r->pts[r->n - 1].start_utc, last) > 0)
                last = r->pts[r->n - 1].start_utc;
            for (size_t j = 0; j < s->n_ch; j++)
                cps += s->ch[j].series == i;
        }
        fputs("<tr><td><a href=\"", f);
        dlb_html_put(f, s->pages[k]);
        fputs("\">", f);
        dlb_html_put(f, s->suites[k]);
        fprintf(f, "</a></td><td class=\"num\">%zu</td><td class=\"num\">%zu</td><td "
                "class=\"num\">%zu</td><td>", configs, series, cps);
        dlb_html_put(f, last);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    dlb_dash_foot(f);
    s->counts.pages++;
    return close_page(f, s->o->out, "index.html", tmp, err);
}

static dlb_status write_suite(struct site *s, size_t k, struct dlb_error *err)
{
    char tmp[4096], sub[1024];
    FILE *f = open_page(s->o->out, s->pages[k], tmp, sizeof tmp);
    if (!f)
        return dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", tmp, strerror(errno));
    subtitle(s, sub, sizeof sub, "<a href=\"index.html\">all suites and alerts</a> &middot; ");
    char title[512];
    snprintf(title, sizeof title, "%s: %s", s->title, s->suites[k]);
    dlb_dash_head(f, title, sub, s->machines, s->n_machines);
    size_t n = s->set.n;
    const struct dlb_series **series = calloc(n + 1, sizeof *series);
    size_t *machine_of = calloc(n + 1, sizeof *machine_of);
    const struct dlb_change **cps = calloc(s->n_ch + 1, sizeof *cps);
    size_t *cp_series = calloc(s->n_ch + 1, sizeof *cp_series);
    dlb_status st = series && machine_of && cps && cp_series ? DLB_OK
                    : dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    /* The series come sorted by suite, configuration, machine: each run
     * of one configuration is one chart. */
    for (size_t i = 0; st == DLB_OK && i < n;) {
        const struct dlb_series *first = &s->set.v[i];
        size_t j = i, m = 0, c = 0;
        for (; j < n && !strcmp(s->set.v[j].suite, first->suite) &&
               !strcmp(s->set.v[j].config, first->config); j++) {
            series[m] = &s->set.v[j];
            machine_of[m] = index_of(s->machines, s->n_machines, s->set.v[j].machine);
            for (size_t q = 0; q < s->n_ch; q++)
                if (s->ch[q].series == j) {
                    cps[c] = &s->ch[q];
                    cp_series[c++] = m;
                }
            m++;
        }
        if (!strcmp(first->suite, s->suites[k])) {
            struct dlb_dash_chart chart = {first->suite, first->config, series, machine_of,
                                           m, cps, cp_series, c};
            dlb_dash_chart(f, &chart);
            s->counts.charts++;
            s->counts.change_points += c;
        }
        i = j;
    }
    free(series);
    free(machine_of);
    free(cps);
    free(cp_series);
    dlb_dash_foot(f);
    dlb_status cs = close_page(f, s->o->out, s->pages[k], tmp, err);
    s->counts.pages++;
    return st == DLB_OK ? cs : st;
}

static dlb_status make_dirs(const char *dir, struct dlb_error *err)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", dir);
    for (char *c = p + 1; *c; c++)
        if (*c == '/') {
            *c = '\0';
            mkdir(p, 0755);
            *c = '/';
        }
    if (mkdir(p, 0755) != 0 && errno != EEXIST)
        return dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", dir, strerror(errno));
    return DLB_OK;
}

dlb_status dlb_dashboard_write(struct dlb_store *st, const struct dlb_dashboard_opts *o,
                               struct dlb_dashboard_counts *counts,
                               struct dlb_error *err)
{
    struct site s;
    memset(&s, 0, sizeof s);
    s.o = o;
    s.where = dlb_db_where(st->db);
    s.title = o->title ? o->title : "dlbench performance";
    dlb_store_now_utc(s.generated, sizeof s.generated);
    struct dlb_cp_opts cp;
    dlb_cp_opts_default(&cp);
    dlb_status r = dlb_db_begin_read(st->db, err);
    if (r == DLB_OK)
        r = dlb_store_series(st, &o->filter, &s.set, err);
    if (r == DLB_OK)
        r = dlb_store_thresholds_read(st, &s.rules, &s.n_rules, err);
    if (r == DLB_OK)
        r = dlb_store_alerts_read(st, &s.alerts, &s.n_alerts, err);
    if (r == DLB_OK)
        r = dlb_db_commit(st->db, err);
    else
        dlb_db_rollback(st->db);
    if (r == DLB_OK)
        r = dlb_changes_find(&s.set, &cp, s.rules, s.n_rules, &s.ch, &s.n_ch, err);
    if (r == DLB_OK) {
        s.machines = distinct(&s.set, 1, &s.n_machines);
        s.suites = distinct(&s.set, 0, &s.n_suites);
        s.pages = calloc(s.n_suites + 1, sizeof *s.pages);
        if (!s.machines || !s.suites || !s.pages)
            r = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; r == DLB_OK && k < s.n_suites; k++)
        if (!(s.pages[k] = page_name(s.suites[k], k, s.pages)))
            r = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    if (r == DLB_OK)
        r = make_dirs(o->out, err);
    for (size_t k = 0; r == DLB_OK && k < s.n_suites; k++)
        r = write_suite(&s, k, err);
    if (r == DLB_OK)
        r = write_index(&s, err);
    for (size_t a = 0; a < s.n_alerts; a++)
        s.counts.alerts += s.alerts[a].state != DLB_ALERT_UNCONFIRMED;
    *counts = s.counts;
    for (size_t k = 0; s.pages && k < s.n_suites; k++)
        free(s.pages[k]);
    free(s.pages);
    free(s.machines);
    free(s.suites);
    free(s.ch);
    dlb_alert_rows_free(s.alerts, s.n_alerts);
    dlb_threshold_rules_free(s.rules, s.n_rules);
    dlb_series_set_free(&s.set);
    return r;
}
