/* `dlbench alerts DB [ack|dismiss|reopen ID --note TEXT]` and
 * `dlbench thresholds DB [set SUITE CONFIG PERCENT | unset SUITE CONFIG]`. */
#include "cli/hist_args.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "history/alerts.h"

static int open_store(const char *cmd, const char *where, struct dlb_store **st)
{
    struct dlb_error err = {""};
    if (dlb_store_open(where, DLB_DB_EXISTING, st, &err) != DLB_OK) {
        fprintf(stderr, "dlbench: %s: %s\n", cmd, err.msg);
        return -1;
    }
    return 0;
}

static int is_open(const struct dlb_alert_row *a)
{
    return a->state == DLB_ALERT_NEW || a->state == DLB_ALERT_ACKNOWLEDGED ||
           a->state == DLB_ALERT_CANDIDATE;
}

static json_t *alert_json(struct dlb_store *st, const struct dlb_alert_row *a)
{
    json_t *members = json_loads(a->members ? a->members : "[]", 0, NULL);
    json_t *events = json_array();
    struct dlb_db_rows r;
    struct dlb_error err;
    if (dlb_store_alert_events(st, a->id, &r, &err) == DLB_OK) {
        for (size_t i = 0; i < r.n_rows; i++)
            json_array_append_new(events, json_pack("{s:s?, s:s?, s:s?}", "state",
                                  dlb_db_text_at(&r, i, 0), "note", dlb_db_text_at(&r, i, 1),
                                  "at_utc", dlb_db_text_at(&r, i, 2)));
        dlb_db_rows_free(&r);
    }
    json_t *j = json_pack("{s:I, s:s, s:s?, s:s?, s:s?, s:s?, s:s?, s:I, s:I, s:I, s:s?,"
                          " s:s?, s:s?, s:s?, s:o, s:o}",
        "id", (json_int_t)a->id, "state", dlb_alert_state_name(a->state),
        "direction", a->direction, "good_commit", a->good_commit, "bad_commit", a->bad_commit,
        "good_utc", a->good_utc, "bad_utc", a->bad_utc, "beyond", (json_int_t)a->beyond,
        "runs_after_when_found", (json_int_t)a->runs_after, "seen", (json_int_t)a->seen,
        "note", a->note, "created_utc", a->created_utc, "updated_utc", a->updated_utc,
        "confirmed_utc", a->confirmed_utc, "members", members ? members : json_array(),
        "events", events ? events : json_array());
    if (j && isfinite(a->worst_ratio))
        json_object_set_new(j, "worst_ratio", json_real(a->worst_ratio));
    return j;
}

static void print_alert(FILE *f, json_t *j, int md)
{
    const char *note = json_string_value(json_object_get(j, "note"));
    json_t *members = json_object_get(j, "members");
    double worst = json_number_value(json_object_get(j, "worst_ratio"));
    char range[160];
    snprintf(range, sizeof range, "%.12s..%.12s",
             json_string_value(json_object_get(j, "good_commit")),
             json_string_value(json_object_get(j, "bad_commit")));
    fprintf(f, md ? "| %lld | %s | %s | %.3f | `%s` | %s | %zu | %s |\n"
                  : "%-4lld %-12s  %-6s  %6.3f  %-26s  %s  %zu  %s\n",
            (long long)json_integer_value(json_object_get(j, "id")),
            json_string_value(json_object_get(j, "state")),
            json_string_value(json_object_get(j, "direction")), worst, range,
            json_string_value(json_object_get(j, "bad_utc")), json_array_size(members),
            note ? note : "");
    size_t i;
    json_t *m;
    if (!md)
        json_array_foreach(members, i, m) {
            const char *b = json_string_value(json_object_get(m, "beyond"));
            fprintf(f, "       %.3f  %s: %s [%s]%s%s%s\n",
                    json_number_value(json_object_get(m, "ratio")),
                    json_string_value(json_object_get(m, "suite")),
                    json_string_value(json_object_get(m, "config")),
                    json_string_value(json_object_get(m, "machine")),
                    b ? ", " : "", b ? b : "", b ? " beyond its threshold" : "");
        }
}

static int list_alerts(struct dlb_hist_args *a, struct dlb_store *st)
{
    struct dlb_alert_row *rows = NULL;
    size_t n = 0;
    struct dlb_error err = {""};
    if (dlb_store_alerts_read(st, &rows, &n, &err) != DLB_OK) {
        fprintf(stderr, "dlbench: alerts: %s\n", err.msg);
        return 2;
    }
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++)
        if (a->all || is_open(&rows[i]))
            json_array_append_new(list, alert_json(st, &rows[i]));
    if (a->format == DLB_HIST_JSON) {
        json_dumpf(list, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    } else {
        int md = a->format == DLB_HIST_MARKDOWN;
        fprintf(stdout, md ? "| alert | state | direction | worst ratio | commits | first "
                "run after | series | note |\n| ---: | --- | --- | ---: | --- | --- | ---: "
                "| --- |\n" : "id   state         dir      worst  commits (good..bad)      "
                "  first run after       series  note\n");
        size_t i;
        json_t *j;
        json_array_foreach(list, i, j)
            print_alert(stdout, j, md);
        if (!json_array_size(list))
            printf("%s\n", a->all ? "no alerts" : "no open alerts (--all lists every one)");
    }
    json_decref(list);
    dlb_alert_rows_free(rows, n);
    return 0;
}

int dlb_cmd_alerts(struct dlb_hist_args *a)
{
    if (a->n_pos != 1 && a->n_pos != 3) {
        fprintf(stderr, "dlbench: alerts: expected DB, or DB ack|dismiss|reopen ID "
                "--note TEXT\n");
        return 2;
    }
    struct dlb_store *st = NULL;
    if (open_store("alerts", a->pos[0], &st))
        return 2;
    int rc;
    if (a->n_pos == 1) {
        rc = list_alerts(a, st);
    } else {
        const char *verb = a->pos[1];
        enum dlb_alert_action act = !strcmp(verb, "ack") ? DLB_ALERT_ACK
                                    : !strcmp(verb, "dismiss") ? DLB_ALERT_DISMISS
                                    : DLB_ALERT_REOPEN;
        char *end;
        errno = 0;
        long long id = strtoll(a->pos[2], &end, 10);
        struct dlb_error err = {""};
        rc = 2;
        if (strcmp(verb, "ack") && strcmp(verb, "dismiss") && strcmp(verb, "reopen"))
            fprintf(stderr, "dlbench: alerts: '%s': expected ack, dismiss or reopen\n", verb);
        else if (errno || end == a->pos[2] || *end || id < 1)
            fprintf(stderr, "dlbench: alerts: %s %s: expected an alert's number\n", verb,
                    a->pos[2]);
        else if (dlb_alert_act(st, id, act, a->note, &err) != DLB_OK)
            fprintf(stderr, "dlbench: alerts: %s\n", err.msg);
        else {
            printf("alert %lld %s\n", id, act == DLB_ALERT_ACK ? "acknowledged"
                   : act == DLB_ALERT_DISMISS ? "dismissed" : "reopened");
            rc = 0;
        }
    }
    dlb_store_close(st);
    return rc;
}

/* "3", "3%" or "0.5" (percent) into a fraction. */
static int percent(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end == '%')
        end++;
    if (errno || end == s || *end || !(v > 0 && v <= 100))
        return -1;
    *out = v / 100;
    return 0;
}

int dlb_cmd_thresholds(struct dlb_hist_args *a)
{
    const char *verb = a->n_pos > 1 ? a->pos[1] : NULL;
    size_t want = !verb ? 1 : !strcmp(verb, "set") ? 5 : !strcmp(verb, "unset") ? 4 : 0;
    if (!a->n_pos || a->n_pos != want) {
        fprintf(stderr, "dlbench: thresholds: expected DB, DB set SUITE CONFIG PERCENT or "
                "DB unset SUITE CONFIG (shell patterns; --machine PATTERN), e.g. "
                "dlbench thresholds results.db set amp 'model=vgg-small *' 3\n");
        return 2;
    }
    double slowdown = 0;
    if (want == 5 && percent(a->pos[4], &slowdown)) {
        fprintf(stderr, "dlbench: thresholds: %s: expected a percentage above 0 and up "
                "to 100, e.g. 3 or 3%%\n", a->pos[4]);
        return 2;
    }
    struct dlb_store *st = NULL;
    if (open_store("thresholds", a->pos[0], &st))
        return 2;
    struct dlb_error err = {""};
    const char *machine = a->machine ? a->machine : "*";
    dlb_status s = DLB_OK;
    int removed = 0;
    if (want == 5)
        s = dlb_store_threshold_set(st, a->pos[2], a->pos[3], machine, slowdown, &err);
    else if (want == 4)
        s = dlb_store_threshold_unset(st, a->pos[2], a->pos[3], machine, &removed, &err);
    struct dlb_threshold_rule *r = NULL;
    size_t n = 0;
    if (s == DLB_OK)
        s = dlb_store_thresholds_read(st, &r, &n, &err);
    if (s == DLB_OK) {
        if (want == 4 && !removed)
            fprintf(stderr, "dlbench: thresholds: no rule for suite %s, configuration %s, "
                    "machine %s\n", a->pos[2], a->pos[3], machine);
        if (a->format == DLB_HIST_JSON) {
            json_t *l = json_array();
            for (size_t i = 0; i < n; i++)
                json_array_append_new(l, json_pack("{s:s, s:s, s:s, s:f}", "suite",
                                      r[i].suite, "config", r[i].config, "machine",
                                      r[i].machine, "slowdown", r[i].slowdown));
            json_dumpf(l, stdout, JSON_INDENT(2));
            fputc('\n', stdout);
            json_decref(l);
        } else {
            printf("suite                 configuration                   machine         "
                   "threshold\n");
            for (size_t i = 0; i < n; i++)
                printf("%-20s  %-30s  %-14s  %.1f%%\n", r[i].suite, r[i].config,
                       r[i].machine, 100 * r[i].slowdown);
            printf("%-20s  %-30s  %-14s  %.1f%% (the default)\n", "*", "*", "*",
                   100 * DLB_CHANGES_THRESHOLD);
        }
    }
    dlb_threshold_rules_free(r, n);
    dlb_store_close(st);
    if (s != DLB_OK) {
        fprintf(stderr, "dlbench: thresholds: %s\n", err.msg);
        return 2;
    }
    return want == 4 && !removed ? 2 : 0;
}
