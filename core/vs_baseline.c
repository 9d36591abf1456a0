/* Speedup and accuracy drop against the baseline configuration. */
#include "vs_baseline.h"

#include <stdlib.h>
#include <string.h>

/* Whether `key` (from an id's "key=value") is a plugin's: NAME.key. */
static int plugin_key(const char *key, size_t len)
{
    return memchr(key, '.', len) != NULL;
}

/* The value of `key` in `id` ("batch=64 amp.precision=bf16"), or NULL;
 * *vlen receives its length. */
static const char *id_value(const char *id, const char *key, size_t klen,
                            size_t *vlen)
{
    for (const char *p = id; *p;) {
        const char *end = strchr(p, ' '), *eq = strchr(p, '=');
        if (!end)
            end = p + strlen(p);
        if (eq && eq < end && (size_t)(eq - p) == klen && !memcmp(p, key, klen)) {
            *vlen = (size_t)(end - eq - 1);
            return eq + 1;
        }
        p = *end ? end + 1 : end;
    }
    return NULL;
}

/* Whether `base` is `id` with every plugin axis at its value in `first`. */
static int is_baseline_of(const char *base, const char *id, const char *first)
{
    for (const char *p = id; *p;) {
        const char *end = strchr(p, ' '), *eq = strchr(p, '=');
        if (!end)
            end = p + strlen(p);
        if (!eq || eq > end)
            return 0;
        size_t klen = (size_t)(eq - p), want_len = 0, have_len = 0;
        const char *want = plugin_key(p, klen)
                               ? id_value(first, p, klen, &want_len)
                               : (want_len = (size_t)(end - eq - 1), eq + 1);
        const char *have = id_value(base, p, klen, &have_len);
        if (!want || !have || want_len != have_len ||
            memcmp(want, have, want_len) != 0)
            return 0;
        p = *end ? end + 1 : end;
    }
    return 1;
}

static int has_plugin_axis(const char *id)
{
    for (const char *p = id; *p;) {
        const char *end = strchr(p, ' '), *eq = strchr(p, '=');
        if (!end)
            end = p + strlen(p);
        if (eq && eq < end && plugin_key(p, (size_t)(eq - p)))
            return 1;
        p = *end ? end + 1 : end;
    }
    return 0;
}

static int ok_record(json_t *r)
{
    const char *s = json_string_value(json_object_get(r, "status"));
    return s && !strcmp(s, "ok");
}

static double member(json_t *o, const char *a, const char *b, int *have)
{
    json_t *v = json_object_get(json_object_get(o, a), b);
    *have = json_is_number(v);
    return *have ? json_number_value(v) : 0.0;
}

static double accuracy(json_t *r, int *have)
{
    json_t *m = json_object_get(json_object_get(r, "metrics"), "accuracy");
    json_t *v = json_object_get(m, "value");
    *have = json_is_number(v);
    return *have ? json_number_value(v) : 0.0;
}

static void annotate_one(json_t *rec, json_t *base)
{
    int h1, h2, h3, h4, h5, h6;
    double t = member(rec, "throughput", "median", &h1);
    double tb = member(base, "throughput", "median", &h2);
    double lo = member(rec, "throughput", "ci_lo", &h3);
    double hib = member(base, "throughput", "ci_hi", &h4);
    json_t *o = json_pack("{s:s}", "baseline_id",
                          json_string_value(json_object_get(base, "id")));
    if (h1 && h2 && tb > 0) {
        json_object_set_new(o, "speedup", json_real(t / tb));
        /* The ratio's interval from the two throughput intervals: a
         * conservative bound, not an exact interval of the ratio. */
        double hi = member(rec, "throughput", "ci_hi", &h5);
        double lob = member(base, "throughput", "ci_lo", &h6);
        if (h3 && h4 && h5 && h6 && hib > 0 && lob > 0) {
            json_object_set_new(o, "speedup_ci_lo", json_real(lo / hib));
            json_object_set_new(o, "speedup_ci_hi", json_real(hi / lob));
        }
    }
    double a = accuracy(rec, &h1), ab = accuracy(base, &h2);
    if (h1 && h2)
        json_object_set_new(o, "accuracy_drop", json_real(ab - a));
    json_object_set_new(rec, "vs_baseline", o);
}

size_t dlb_vs_baseline_annotate(json_t *records, const char *first_id)
{
    size_t i, k, n = 0;
    json_t *rec, *cand;
    if (!first_id || !has_plugin_axis(first_id))
        return 0;
    json_array_foreach(records, i, rec) {
        const char *id = json_string_value(json_object_get(rec, "id"));
        json_object_del(rec, "vs_baseline");
        if (!id || !ok_record(rec))
            continue;
        json_array_foreach(records, k, cand) {
            const char *bid = json_string_value(json_object_get(cand, "id"));
            if (k == i || !bid || !ok_record(cand) ||
                !is_baseline_of(bid, id, first_id))
                continue;
            annotate_one(rec, cand);
            n++;
            break;
        }
    }
    return n;
}

void dlb_vs_baseline_print(FILE *f, json_t *records)
{
    size_t i, w = 6;
    json_t *rec;
    int any = 0;
    json_array_foreach(records, i, rec) {
        const char *id = json_string_value(json_object_get(rec, "id"));
        if (json_object_get(rec, "vs_baseline") && id) {
            any = 1;
            w = strlen(id) > w ? strlen(id) : w;
        }
    }
    if (!any)
        return;
    fprintf(f, "\nvs baseline (the same configuration with each plugin axis at "
               "its first value)\n");
    fprintf(f, "%-*s  %8s  %15s  %13s  %s\n", (int)w, "config", "speedup",
            "speedup 95% CI", "accuracy drop", "baseline");
    fprintf(f, "%-*s  %8s  %15s  %13s\n", (int)w, "", "x", "x", "points");
    json_array_foreach(records, i, rec) {
        json_t *o = json_object_get(rec, "vs_baseline");
        if (!o)
            continue;
        char sp[32] = "-", ci[48] = "-", drop[32] = "-";
        json_t *s = json_object_get(o, "speedup");
        json_t *lo = json_object_get(o, "speedup_ci_lo");
        json_t *hi = json_object_get(o, "speedup_ci_hi");
        json_t *d = json_object_get(o, "accuracy_drop");
        if (json_is_number(s))
            snprintf(sp, sizeof sp, "%.2f", json_number_value(s));
        if (json_is_number(lo) && json_is_number(hi))
            snprintf(ci, sizeof ci, "%.2f-%.2f", json_number_value(lo),
                     json_number_value(hi));
        if (json_is_number(d))
            snprintf(drop, sizeof drop, "%+.2f", json_number_value(d));
        fprintf(f, "%-*s  %8s  %15s  %13s  %s\n", (int)w,
                json_string_value(json_object_get(rec, "id")), sp, ci, drop,
                json_string_value(json_object_get(o, "baseline_id")));
    }
}
