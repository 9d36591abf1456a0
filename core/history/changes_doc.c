/* `dlbench changes`' document and its table and markdown (changes_doc.h). */
#include "history/changes_doc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct dlb_alert_row *alert_by_id(const struct dlb_changes_eval *e,
                                               long long id)
{
    for (size_t i = 0; i < e->n_alerts; i++)
        if (e->alerts[i].id == id)
            return &e->alerts[i];
    return NULL;
}

static json_t *group_json(const struct dlb_changes_eval *e, size_t k)
{
    const struct dlb_change_group *g = &e->g[k];
    char *text = dlb_change_group_members_json(e->set, e->ch, g);
    json_t *members = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    const char *dir = g->slower_beyond ? "slower" : g->beyond ? "faster" : "within";
    json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:o}",
                          "good_commit", g->good_commit, "bad_commit", g->bad_commit,
                          "good_utc", g->good_utc, "bad_utc", g->bad_utc,
                          "direction", dir, "beyond", (json_int_t)g->beyond,
                          "members", members ? members : json_array());
    if (!j)
        return NULL;
    if (isfinite(g->worst_ratio))
        json_object_set_new(j, "worst_ratio", json_real(g->worst_ratio));
    const struct dlb_alert_row *a = e->alert_of && e->alert_of[k] >= 0
                                    ? alert_by_id(e, e->alert_of[k]) : NULL;
    json_object_set_new(j, "alert", a ? json_pack("{s:I, s:s, s:s?}", "id",
                        (json_int_t)a->id, "state", dlb_alert_state_name(a->state),
                        "note", a->note) : json_null());
    return j;
}

/* The distinct (suite, machine) pairs of a candidate's members: what to
 * run again to confirm it. */
static void add_to_confirm(json_t *list, const struct dlb_alert_row *a)
{
    json_t *m = json_loads(a->members ? a->members : "[]", 0, NULL);
    size_t i, k;
    json_t *v, *w;
    json_array_foreach(m, i, v) {
        const char *suite = json_string_value(json_object_get(v, "suite"));
        const char *machine = json_string_value(json_object_get(v, "machine"));
        int dup = 0;
        json_array_foreach(list, k, w)
            dup |= json_integer_value(json_object_get(w, "alert")) == a->id &&
                   json_equal(json_object_get(w, "suite"), json_object_get(v, "suite")) &&
                   json_equal(json_object_get(w, "machine"), json_object_get(v, "machine"));
        if (suite && machine && !dup)
            json_array_append_new(list, json_pack("{s:I, s:s, s:s}", "alert",
                                  (json_int_t)a->id, "suite", suite, "machine", machine));
    }
    json_decref(m);
}

json_t *dlb_changes_document(const struct dlb_changes_eval *e)
{
    json_t *groups = json_array(), *confirm = json_array(), *failing = json_array();
    json_t *doc = json_pack("{s:s, s:i, s:s, s:{s:s, s:f, s:i, s:I, s:I}, s:I, s:I}",
        "schema", "dlbench-changes", "schema_version", 1, "store", e->where,
        "method", "name", "e-divisive means", "alpha", e->opts->alpha,
        "permutations", e->opts->permutations, "min_size", (json_int_t)e->opts->min_size,
        "seed", (json_int_t)e->opts->seed, "series", (json_int_t)e->set->n,
        "change_points", (json_int_t)e->n_ch);
    if (!doc || !groups || !confirm || !failing) {
        json_decref(doc);
        json_decref(groups);
        json_decref(confirm);
        json_decref(failing);
        return NULL;
    }
    for (size_t k = 0; k < e->ng; k++)
        json_array_append_new(groups, group_json(e, k));
    for (size_t i = 0; i < e->n_alerts; i++) {
        const struct dlb_alert_row *a = &e->alerts[i];
        if (!dlb_alert_in_set(a->members, e->set))
            continue;
        if (a->state == DLB_ALERT_CANDIDATE)
            add_to_confirm(confirm, a);
        if (a->state == DLB_ALERT_NEW && a->direction && !strcmp(a->direction, "slower"))
            json_array_append_new(failing, json_integer(a->id));
    }
    json_object_set_new(doc, "groups", groups);
    json_object_set_new(doc, "alerts", e->counts ? json_pack("{s:I, s:I, s:I, s:I}",
        "created", (json_int_t)e->counts->created, "confirmed",
        (json_int_t)e->counts->confirmed, "updated", (json_int_t)e->counts->updated,
        "unconfirmed", (json_int_t)e->counts->unconfirmed) : json_null());
    json_object_set_new(doc, "to_confirm", confirm);
    json_object_set_new(doc, "failing", failing);
    return doc;
}

static double num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* "1.082 (1.070-1.094)", or "-" where the size could not be computed. */
static void fmt_ratio(char *buf, size_t n, json_t *m)
{
    json_t *ci = json_object_get(m, "ratio_ci");
    double r = num(m, "ratio");
    if (!isfinite(r))
        snprintf(buf, n, "-");
    else if (json_array_size(ci) == 2)
        snprintf(buf, n, "%.3f (%.3f-%.3f)", r, json_number_value(json_array_get(ci, 0)),
                 json_number_value(json_array_get(ci, 1)));
    else
        snprintf(buf, n, "%.3f", r);
}

static void print_group(FILE *f, json_t *g, int md)
{
    json_t *alert = json_object_get(g, "alert"), *members = json_object_get(g, "members");
    char head[512];
    snprintf(head, sizeof head, "%.12s..%.12s (%s .. %s)", str(g, "good_commit"),
             str(g, "bad_commit"), str(g, "good_utc"), str(g, "bad_utc"));
    char state[160] = "within thresholds: no alert";
    if (json_is_object(alert))
        snprintf(state, sizeof state, "alert %lld %s: %s",
                 (long long)json_integer_value(json_object_get(alert, "id")),
                 str(alert, "state"), str(g, "direction"));
    if (md)
        fprintf(f, "#### %s\n\n%s\n\n| series | machine | median step time after / before "
                "(95%% CI) | threshold | runs before + after | |\n| --- | --- | ---: | ---: "
                "| ---: | --- |\n", head, state);
    else
        fprintf(f, "%s  %s\n  %-24s  %6s  %-7s  %s\n", head, state, "ratio (95% CI)",
                "thresh", "runs", "series [machine]");
    size_t i;
    json_t *m;
    json_array_foreach(members, i, m) {
        char ratio[96], series[1024];
        fmt_ratio(ratio, sizeof ratio, m);
        snprintf(series, sizeof series, "%s: %s", str(m, "suite"), str(m, "config"));
        const char *beyond = str(m, "beyond");
        const char *what = !strcmp(beyond, "slower") ? "slower beyond threshold"
                           : !strcmp(beyond, "faster") ? "faster beyond threshold" : "";
        if (md)
            fprintf(f, "| %s | %s | %s | %.1f%% | %lld + %lld | %s%s%s |\n", series,
                    str(m, "machine"), ratio, 100 * num(m, "threshold"),
                    (long long)num(m, "runs_before"), (long long)num(m, "runs_after"),
                    *what ? "**" : "", what, *what ? "**" : "");
        else
            fprintf(f, "  %-24s  %5.1f%%  %3lld+%-3lld  %s [%s]  %s\n", ratio,
                    100 * num(m, "threshold"), (long long)num(m, "runs_before"),
                    (long long)num(m, "runs_after"), series, str(m, "machine"), what);
    }
    fputc('\n', f);
}

void dlb_changes_print(FILE *f, json_t *doc, int md)
{
    json_t *method = json_object_get(doc, "method"), *groups = json_object_get(doc, "groups");
    json_t *failing = json_object_get(doc, "failing"), *confirm = json_object_get(doc, "to_confirm");
    size_t ng = json_array_size(groups);
    fprintf(f, md ? "### dlbench changes: %s\n\n%lld series, %lld change points in %zu "
            "group%s (E-divisive means, alpha %g, %lld permutations, %lld runs a side at "
            "least)\n\n" : "%s: %lld series, %lld change points in %zu group%s\n(E-divisive "
            "means, alpha %g, %lld permutations, %lld runs a side at least; ratio: median "
            "step time after / before the change, 95%% CI)\n\n",
            str(doc, "store"), (long long)num(doc, "series"),
            (long long)num(doc, "change_points"), ng, ng == 1 ? "" : "s",
            num(method, "alpha"), (long long)num(method, "permutations"),
            (long long)num(method, "min_size"));
    size_t i;
    json_t *g;
    json_array_foreach(groups, i, g)
        print_group(f, g, md);
    json_array_foreach(confirm, i, g)
        fprintf(f, "%salert %lld is a candidate: run %s on %s again (or wait for the next "
                "night) to confirm it%s\n", md ? "- " : "",
                (long long)num(g, "alert"), str(g, "suite"), str(g, "machine"),
                md ? "" : "");
    json_array_foreach(failing, i, g)
        fprintf(f, "%s%salert %lld: raised, a slowdown beyond its threshold (dlbench alerts "
                "DB ack %lld --note ... once someone owns it)%s\n", md ? "- " : "",
                md ? "**" : "", (long long)json_integer_value(g),
                (long long)json_integer_value(g), md ? "**" : "");
    if (!json_array_size(groups))
        fprintf(f, "no change points\n");
}
