/* A verdict per setting: each value of the settings to tune (a plugin's
 * settings together, or one core key such as backend or batch) against
 * its workload's baseline, on every workload, in plain words: "pays off",
 * "no measurable effect" or "costs", and where. Only configurations that
 * change one plugin's settings (or one core key) are judged: a
 * combination of two is a candidate for the winner, not a setting.
 *
 * The verdicts of struct dlb_selection (results/selection.h), written as
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

/* A row's figures: none, until judged. */
static void row_init(struct dlb_sel_verdict_row *o)
{
    memset(o, 0, sizeof *o);
    o->speedup = o->speedup_ci_lo = o->speedup_ci_hi = NAN;
    o->accuracy_change = o->accuracy_ci = o->memory_change = NAN;
    o->accuracy_seeds = NAN;
}

static void judge(struct dlb_strpool *pool, const struct dlb_select_settings *set,
                  const struct dlb_sel_item *it, const char *id,
                  const struct dlb_sel_item *base, const char *base_id,
                  const char *workload, struct dlb_sel_verdict_row *o)
{
    char why[600];
    const char *verdict;
    row_init(o);
    o->workload = workload;
    o->id = id;
    o->baseline = base ? base_id : NULL;
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
        double lo, hi, p, sp = dlb_sel_speedup(set, it, base, &lo, &hi);
        o->speedup = dlb_sel_fig(sp);
        if (!isnan(dlb_sel_fig(lo)) && !isnan(dlb_sel_fig(hi)))
            o->speedup_ci_lo = lo, o->speedup_ci_hi = hi;
        o->doubtful_why = dlb_sel_doubtful_why(pool, it, base);
        if (!isnan(it->accuracy) && !isnan(base->accuracy)) {
            struct dlb_sel_acc a;
            dlb_sel_accuracy_change(set, it, base, &a);
            if (a.known) {
                o->accuracy_change = dlb_sel_fig(a.change);
                o->accuracy_ci = dlb_sel_fig(a.half);
                o->accuracy_seeds = (double)a.seeds;
                o->accuracy_effect = dlb_sel_accuracy_effect(&a);
            } else {
                o->accuracy_note = "not compared: trained on another number "
                                   "of images";
            }
        }
        if (!isnan(it->memory) && base->memory > 0)
            o->memory_change = dlb_sel_fig(it->memory / base->memory - 1);
        if (it->n_viol) {
            snprintf(why, sizeof why, "breaks %s (%.3g against %.3g)",
                     it->viol[0].constraint, it->viol[0].value, it->viol[0].limit);
            verdict = "costs";
        } else if ((lo > 1 || hi < 1) && !dlb_sel_differ(set, it, base, &p)) {
            /* the winner's test (select.c's ties): with too few samples
             * for it, intervals of [min, max] can miss each other
             * without showing anything */
            snprintf(why, sizeof why, "%sthe U test does not show a "
                     "difference (p = %.2g over %zu and %zu samples), though "
                     "the speedup's interval is %s 1",
                     it->n < 6 || base->n < 6 ? "too few samples to tell: " : "",
                     p, it->n, base->n, lo > 1 ? "above" : "below");
            verdict = "no measurable effect";
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
    o->verdict = verdict;
    o->why = dlb_strpool_add(pool, why);
}

static int is(const struct dlb_sel_verdict_row *row, const char *verdict)
{
    return !strcmp(row->verdict, verdict);
}

static const char *workload_of(const struct dlb_sel_verdict_row *row)
{
    return row->workload ? row->workload : "";
}

/* The workloads of `v`'s rows whose verdict is `word`, said as briefly as
 * possible: "model=vgg-small" when exactly the measured workloads with
 * that value, else their list. */
static void where(const struct dlb_sel_verdict *v, const char *word, char *buf,
                  size_t len)
{
    size_t n = 0, measured = 0;
    const struct dlb_sel_verdict_row *first = NULL;
    for (size_t i = 0; i < v->n_rows; i++) {
        measured += !is(&v->rows[i], "not measured");
        if (is(&v->rows[i], word) && n++ == 0)
            first = &v->rows[i];
    }
    buf[0] = '\0';
    if (!first)
        return;
    char label[512], *save = NULL;
    snprintf(label, sizeof label, "%s", workload_of(first));
    for (char *t = strtok_r(label, " ", &save); t && n < measured;
         t = strtok_r(NULL, " ", &save)) {
        int exact = 1;
        for (size_t i = 0; i < v->n_rows; i++) {
            const struct dlb_sel_verdict_row *row = &v->rows[i];
            if (is(row, "not measured"))
                continue;
            char pad[600];
            snprintf(pad, sizeof pad, " %s ", workload_of(row));
            char tok[520];
            snprintf(tok, sizeof tok, " %s ", t);
            exact &= (strstr(pad, tok) != NULL) == is(row, word);
        }
        if (exact) {
            snprintf(buf, len, "%s", t);
            return;
        }
    }
    size_t used = 0;
    for (size_t i = 0; i < v->n_rows; i++)
        if (is(&v->rows[i], word) && used < len) {
            int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                             workload_of(&v->rows[i]));
            used += w > 0 ? (size_t)w : 0;
        }
}

static void summarize(struct dlb_strpool *pool, struct dlb_sel_verdict *v)
{
    size_t n[4] = {0};
    static const char *const words[4] = {"pays off", "costs",
                                         "no measurable effect", "not measured"};
    const struct dlb_sel_verdict_row *doubt = NULL;
    for (size_t i = 0; i < v->n_rows; i++) {
        for (int w = 0; w < 4; w++)
            n[w] += is(&v->rows[i], words[w]);
        if (!doubt && v->rows[i].doubtful_why)
            doubt = &v->rows[i];
    }
    /* one doubtful workload is enough to doubt the setting's verdict */
    if (doubt)
        v->doubtful_why = doubt->doubtful_why;
    size_t measured = n[0] + n[1] + n[2], total = v->n_rows;
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
        snprintf(text, sizeof text, "not measured: %s",
                 v->rows[0].why ? v->rows[0].why : "");
    }
    if (!strcmp(overall, "mixed"))
        for (int w = 0; w < 3; w++) {
            if (!n[w])
                continue;
            where(v, words[w], part, sizeof part);
            size_t used = strlen(text);
            snprintf(text + used, sizeof text - used, "%s%s on %s%s",
                     used ? "; " : "", words[w], part, w == 0 ? " only" : "");
        }
    v->verdict = overall;
    v->summary = dlb_strpool_add(pool, text);
}

dlb_status dlb_sel_verdicts(struct dlb_selection *out, const struct dlb_plan *plan,
                            const struct dlb_select_settings *set,
                            const struct dlb_sel_groups *groups,
                            struct dlb_sel_item *items, size_t n,
                            struct dlb_sel_item *const *base,
                            const char *const *ids)
{
    char label[1024];
    /* per item: its setting's verdict, or n when it judges none */
    size_t *of = malloc((n + 1) * sizeof *of);
    out->verdicts = calloc(n + 1, sizeof *out->verdicts);
    if (!of || !out->verdicts) {
        free(of);
        return DLB_ERR_NOMEM;
    }
    /* settings in order of their first configuration */
    for (size_t k = 0; k < n; k++) {
        const struct dlb_config *c = items[k].cfg;
        size_t g = c ? groups->of[items[k].pos] : 0;
        of[k] = n;
        if (!c || groups->base[g] == DLB_SEL_NO_BASE)
            continue;
        setting_of(plan, set, c, &plan->configs[groups->base[g]], label,
                   sizeof label);
        if (!label[0])
            continue;
        size_t v = 0;
        while (v < out->n_verdicts && strcmp(out->verdicts[v].setting, label))
            v++;
        if (v == out->n_verdicts &&
            !(out->verdicts[out->n_verdicts++].setting =
                  dlb_strpool_add(&out->strings, label))) {
            free(of);
            return DLB_ERR_NOMEM;
        }
        of[k] = v;
        out->verdicts[v].n_rows++;
    }
    for (size_t v = 0; v < out->n_verdicts; v++) {
        struct dlb_sel_verdict *vd = &out->verdicts[v];
        vd->rows = calloc(vd->n_rows + 1, sizeof *vd->rows);
        vd->n_rows = 0;
        if (!vd->rows) {
            free(of);
            return DLB_ERR_NOMEM;
        }
    }
    for (size_t k = 0; k < n; k++) {
        if (of[k] == n)
            continue;
        struct dlb_sel_verdict *vd = &out->verdicts[of[k]];
        size_t g = groups->of[items[k].pos];
        const struct dlb_sel_item *b = base[g];
        judge(&out->strings, set, &items[k], ids[k], b, b ? ids[b - items] : NULL,
              out->groups[g].workload, &vd->rows[vd->n_rows++]);
    }
    free(of);
    for (size_t v = 0; v < out->n_verdicts; v++)
        summarize(&out->strings, &out->verdicts[v]);
    return DLB_OK;
}
