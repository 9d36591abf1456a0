/* The report's profile (suite key `profile = ops`): per configuration that
 * recorded one, where its measured step went: the time per kernel, then
 * the operations that took the most of it, from the record's "profile"
 * (doc/results-schema.md). Without it a user who asked for the profile
 * had to read it out of results.json. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_impl.h"

#define LINE 1400
/* operations listed per configuration, the longest first */
#define TOP_OPS 10
/* kernels named in a configuration's line; the rest summed as "other" */
#define TOP_KERNELS 8

static const json_t *ops_of(const json_t *rec)
{
    const json_t *ops = json_object_get(json_object_get(rec, "profile"), "ops");
    return json_is_array(ops) && json_array_size(ops) ? ops : NULL;
}

static double num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : 0.0;
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

struct kernel_time {
    const char *name;
    double s;
};

static int by_time(const void *a, const void *b)
{
    double x = ((const struct kernel_time *)a)->s;
    double y = ((const struct kernel_time *)b)->s;
    return (x < y) - (x > y);
}

/* "dw_avx512 1.447 ms (41%), onednn ..." */
static void kernel_words(char *b, size_t len, const json_t *ops, double step_s)
{
    size_t n = json_array_size(ops), nk = 0, o = 0;
    struct kernel_time *k = calloc(n, sizeof *k);
    if (!k) {
        b[0] = 0;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *op = json_array_get(ops, i);
        const char *name = str(op, "kernel");
        size_t j = 0;
        while (j < nk && strcmp(k[j].name, name))
            j++;
        if (j == nk)
            k[nk++].name = name;
        k[j].s += num(op, "time_per_step_s");
    }
    qsort(k, nk, sizeof *k, by_time);
    double other = 0.0;
    b[0] = 0;
    for (size_t j = 0; j < nk; j++) {
        if (j >= TOP_KERNELS) {
            other += k[j].s;
            continue;
        }
        int w = snprintf(b + o, len - o, "%s%s %.3f ms (%.0f%%)", j ? ", " : "",
                         k[j].name, k[j].s * 1e3,
                         step_s > 0 ? 100 * k[j].s / step_s : 0.0);
        if (w < 0 || (size_t)w >= len - o)
            break;
        o += (size_t)w;
    }
    if (other > 0 && o < len)
        snprintf(b + o, len - o, ", other %.3f ms", other * 1e3);
    free(k);
}

static int by_op_time(const void *a, const void *b)
{
    double x = num(*(const json_t *const *)a, "time_per_step_s");
    double y = num(*(const json_t *const *)b, "time_per_step_s");
    return (x < y) - (x > y);
}

static int record_lines(struct dlb_rep *r, const struct dlb_record *rec,
                        const json_t *ops)
{
    const json_t *prof = json_object_get(rec->json, "profile");
    size_t n = json_array_size(ops);
    double step_s = num(prof, "per_step_s");
    char kernels[900];
    kernel_words(kernels, sizeof kernels, ops, step_s);
    struct dlb_rep_line *l = &r->profile[r->n_profile++];
    l->level = 0;
    snprintf(l->text, LINE, "%s: %.3f ms a step over %zu operations, each "
             "timed alone; by kernel: %s", rec->id, step_s * 1e3, n, kernels);
    const json_t **sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return -1;
    for (size_t i = 0; i < n; i++)
        sorted[i] = json_array_get(ops, i);
    qsort(sorted, n, sizeof *sorted, by_op_time);
    for (size_t i = 0; i < n && i < TOP_OPS; i++) {
        const json_t *op = sorted[i];
        const char *layer = json_string_value(json_object_get(op, "layer"));
        const char *prop = str(op, "prop");
        double calls = num(op, "calls_per_step");
        char times[48] = "";
        if (calls != 1.0)
            snprintf(times, sizeof times, ", %.3g calls a step", calls);
        l = &r->profile[r->n_profile++];
        l->level = 1;
        snprintf(l->text, LINE, "%s: %s%s%s on %s, %.3f ms (%.1f%% of the "
                 "step)%s", layer ? layer : "(no layer)", str(op, "op"),
                 prop[0] ? " " : "", prop, str(op, "kernel"),
                 num(op, "time_per_step_s") * 1e3, 100 * num(op, "share"), times);
    }
    free(sorted);
    return 0;
}

int dlb_rep_profile(struct dlb_rep *r, const struct dlb_record *recs, size_t n)
{
    size_t lines = 0;
    for (size_t i = 0; i < n; i++)
        if (ops_of(recs[i].json))
            lines += 1 + TOP_OPS;
    if (!lines)
        return 0;
    r->profile = calloc(lines, sizeof *r->profile);
    if (!r->profile)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const json_t *ops = ops_of(recs[i].json);
        if (ops && record_lines(r, &recs[i], ops))
            return -1;
    }
    return 0;
}
