/* A verdict per setting: each value of the settings to tune (a plugin's
 * settings together, or one core key such as backend or batch) against
 * its workload's baseline, on every workload, in plain words: "pays off",
 * "no measurable effect" or "costs", and where. Only configurations that
 * change one plugin's settings (or one core key) are judged: a
 * combination of two is a candidate for the winner, not a setting.
 *
 * "selection"."verdicts": [ {"setting": "amp.precision=bf16",
 *     "verdict": "pays off" | "costs" | "no measurable effect" | "mixed" |
 *                "not measured",
 *     "summary": "pays off on model=vgg-small only; costs on ...",
 *     "workloads": [ {"workload", "id", "baseline", "verdict", "why",
 *                     "speedup", "speedup_ci": [lo, hi],
 *                     "accuracy_change" (points, + is better: the mean
 *                     of the differences over paired seeds),
 *                     "accuracy_ci" (its 95% half-width),
 *                     "accuracy_seeds", "accuracy_effect" ("gain",
 *                     "loss", "no measurable effect", "training noise
 *                     not measured"),
 *                     "accuracy_note", "memory_change" (ratio - 1),
 *                     "doubtful": true, "doubtful_why" (when the row's
 *                     record or its baseline's is doubtful)} ],
 *     "doubtful", "doubtful_why": when any row is } ] */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite/param.h"
#include "select/select_impl.h"

/* The setting configuration c applies on top of its baseline b, as
 * "key=value ..." in suite order, a plugin's `enable` first (it says what
 * the rest are settings of); "" when c is b or changes the settings of
 * more than one plugin (or more than one core key). */
static void setting_of(const struct dlb_plan *p,
                       const struct dlb_select_settings *set,
                       const struct dlb_config *c, const struct dlb_config *b,
                       char *buf, size_t len)
{
    const struct dlb_suite *s = p->suite;
    size_t used = 0;
    int ns_seen = -1, core_keys = 0;
    buf[0] = '\0';
    for (unsigned ns = 0; ns < s->n_ns; ns++)
        for (unsigned k = 0; k < s->ns[ns].n; k++) {
            if (dlb_sel_is_workload(set, ns, k) ||
                !strcmp(c->values[ns][k].s, b->values[ns][k].s))
                continue;
            if ((ns_seen >= 0 && (unsigned)ns_seen != ns) ||
                (ns == 0 && ++core_keys > 1)) {
                buf[0] = '\0';
                return;
            }
            ns_seen = (int)ns;
            char name[256];
            dlb_suite_key_name(s, (struct dlb_keyref){ns, k}, name, sizeof name);
            int w = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "",
                             name, c->values[ns][k].s);
            if (w < 0 || (size_t)w >= len - used) {
                buf[0] = '\0';
                return;
            }
            used += (size_t)w;
        }
    /* "mempool.release=on_miss mempool.enable=on" -> enable first */
    char *en = ns_seen > 0 ? strstr(buf, ".enable=") : NULL;
    while (en && en > buf && en[-1] != ' ')
        en--;
    if (en && en != buf) {
        char moved[1024];
        size_t n = strcspn(en, " ");
        snprintf(moved, sizeof moved, "%.*s %.*s%s", (int)n, en,
                 (int)(en - buf - 1), buf, en + n);
        snprintf(buf, len, "%s", moved);
    }
}

static const char *id_of(const struct dlb_sel_item *it)
{
    return it->r.id;
}

static json_t *judge(const struct dlb_select_settings *set,
                     const struct dlb_sel_item *it,
                     const struct dlb_sel_item *base, const char *workload)
{
    json_t *o = json_pack("{s:s,s:s}", "workload", workload, "id", id_of(it));
    char why[600];
    const char *verdict;
    if (base)
        json_object_set_new(o, "baseline", json_string(id_of(base)));
    if (!it->ok || !it->full) {
        const char *st = it->r.json ? dlb_rec_status_name(it->r.status) : NULL;
        const char *reason = it->r.reason;
        snprintf(why, sizeof why, "%s%s%s", st ? st : "no record",
                 reason ? ": " : "", reason ? reason : "");
        verdict = "not measured";
    } else if (!base || !base->ok) {
        snprintf(why, sizeof why, "its baseline has no figures");
        verdict = "not measured";
    } else {
        double lo, hi, sp = dlb_sel_speedup(set, it, base, &lo, &hi);
        json_object_set_new(o, "speedup", json_real(sp));
        json_object_set_new(o, "speedup_ci", json_pack("[f,f]", lo, hi));
        dlb_sel_doubtful_json(o, "doubtful", it, base);
        if (!isnan(it->accuracy) && !isnan(base->accuracy)) {
            struct dlb_sel_acc a;
            dlb_sel_accuracy_change(set, it, base, &a);
            if (a.known) {
                json_object_set_new(o, "accuracy_change", json_real(a.change));
                if (!isnan(a.half))
                    json_object_set_new(o, "accuracy_ci", json_real(a.half));
                json_object_set_new(o, "accuracy_seeds",
                                    json_integer((json_int_t)a.seeds));
                json_object_set_new(o, "accuracy_effect",
                                    json_string(dlb_sel_accuracy_effect(&a)));
            } else {
                json_object_set_new(o, "accuracy_note", json_string(
                    "not compared: trained on another number of images"));
            }
        }
        if (!isnan(it->memory) && base->memory > 0)
            json_object_set_new(o, "memory_change",
                                json_real(it->memory / base->memory - 1));
        if (it->n_viol) {
            snprintf(why, sizeof why, "breaks %s (%.3g against %.3g)",
                     it->viol[0].constraint, it->viol[0].value, it->viol[0].limit);
            verdict = "costs";
        } else if (lo > 1) {
            snprintf(why, sizeof why, "faster: the speedup's interval is above 1");
            verdict = "pays off";
        } else if (hi < 1) {
            snprintf(why, sizeof why, "slower: the speedup's interval is below 1");
            verdict = "costs";
        } else {
            snprintf(why, sizeof why, "the speedup's interval holds 1");
            verdict = "no measurable effect";
        }
    }
    json_object_set_new(o, "verdict", json_string(verdict));
    json_object_set_new(o, "why", json_string(why));
    return o;
}

static int is(json_t *row, const char *verdict)
{
    return !strcmp(json_string_value(json_object_get(row, "verdict")), verdict);
}

/* The workloads of `rows` whose verdict is `v`, said as briefly as
 * possible: "model=vgg-small" when exactly the measured workloads with
 * that value, else their list. */
static void where(json_t *rows, const char *v, char *buf, size_t len)
{
    size_t i, n = 0, measured = 0;
    json_t *row, *first = NULL;
    json_array_foreach(rows, i, row) {
        measured += !is(row, "not measured");
        if (is(row, v) && n++ == 0)
            first = row;
    }
    buf[0] = '\0';
    if (!first)
        return;
    char label[512], *save = NULL;
    snprintf(label, sizeof label, "%s",
             json_string_value(json_object_get(first, "workload")));
    for (char *t = strtok_r(label, " ", &save); t && n < measured;
         t = strtok_r(NULL, " ", &save)) {
        int exact = 1;
        json_array_foreach(rows, i, row) {
            if (is(row, "not measured"))
                continue;
            char pad[600];
            snprintf(pad, sizeof pad, " %s ",
                     json_string_value(json_object_get(row, "workload")));
            char tok[520];
            snprintf(tok, sizeof tok, " %s ", t);
            exact &= (strstr(pad, tok) != NULL) == is(row, v);
        }
        if (exact) {
            snprintf(buf, len, "%s", t);
            return;
        }
    }
    size_t used = 0;
    json_array_foreach(rows, i, row)
        if (is(row, v) && used < len) {
            int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                             json_string_value(json_object_get(row, "workload")));
            used += w > 0 ? (size_t)w : 0;
        }
}

static void summarize(json_t *verdict, json_t *rows)
{
    size_t i, n[4] = {0};
    static const char *const words[4] = {"pays off", "costs",
                                         "no measurable effect", "not measured"};
    json_t *row, *doubt = NULL;
    json_array_foreach(rows, i, row) {
        for (int w = 0; w < 4; w++)
            n[w] += is(row, words[w]);
        if (!doubt && json_is_true(json_object_get(row, "doubtful")))
            doubt = row;
    }
    /* one doubtful workload is enough to doubt the setting's verdict */
    if (doubt) {
        json_object_set_new(verdict, "doubtful", json_true());
        json_object_set(verdict, "doubtful_why", json_object_get(doubt, "doubtful_why"));
    }
    size_t measured = n[0] + n[1] + n[2], total = json_array_size(rows);
    char text[1400] = "", part[600];
    const char *overall = "mixed";
    for (int w = 0; w < 3; w++)
        if (measured && n[w] == measured) {
            overall = words[w];
            snprintf(text, sizeof text, "%s%s", words[w],
                     total > 1 ? (n[3] ? " wherever measured" : " on every workload")
                               : "");
        }
    if (!measured) {
        overall = "not measured";
        snprintf(text, sizeof text, "not measured: %s", json_string_value(
            json_object_get(json_array_get(rows, 0), "why")));
    }
    if (!strcmp(overall, "mixed"))
        for (int w = 0; w < 3; w++) {
            if (!n[w])
                continue;
            where(rows, words[w], part, sizeof part);
            size_t used = strlen(text);
            snprintf(text + used, sizeof text - used, "%s%s on %s%s",
                     used ? "; " : "", words[w], part, w == 0 ? " only" : "");
        }
    json_object_set_new(verdict, "verdict", json_string(overall));
    json_object_set_new(verdict, "summary", json_string(text));
}

void dlb_sel_add_verdicts(json_t *sel, const struct dlb_plan *plan,
                          const struct dlb_select_settings *set,
                          const struct dlb_sel_groups *groups,
                          struct dlb_sel_item *items, size_t n,
                          struct dlb_sel_item *const *base)
{
    json_t *out = json_array();
    char label[1024];
    /* settings in order of their first configuration */
    for (size_t k = 0; k < n; k++) {
        const struct dlb_config *c = items[k].cfg;
        size_t g = c ? groups->of[items[k].pos] : 0;
        if (!c || groups->base[g] == DLB_SEL_NO_BASE)
            continue;
        setting_of(plan, set, c, &plan->configs[groups->base[g]], label,
                   sizeof label);
        if (!label[0])
            continue;
        json_t *v = NULL, *each;
        size_t i;
        json_array_foreach(out, i, each)
            if (!strcmp(json_string_value(json_object_get(each, "setting")), label))
                v = each;
        if (!v) {
            v = json_pack("{s:s,s:[]}", "setting", label, "workloads");
            json_array_append_new(out, v);
        }
        json_array_append_new(json_object_get(v, "workloads"),
                              judge(set, &items[k], base[g], groups->label[g]));
    }
    json_t *v;
    size_t i;
    json_array_foreach(out, i, v)
        summarize(v, json_object_get(v, "workloads"));
    json_object_set_new(sel, "verdicts", out);
}
