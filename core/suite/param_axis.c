/* Sweep axes: "a, b, c" lists and START:END:STEP ranges, expanded into
 * validated canonical texts. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite/param.h"

/* A list longer than this is almost certainly a typo in a range. */
#define DLB_AXIS_MAX_ITEMS 10000

static int is_numeric(enum dlb_param_type t)
{
    return t == DLB_PARAM_INT || t == DLB_PARAM_FLOAT || t == DLB_PARAM_SIZE ||
           t == DLB_PARAM_TIME;
}

struct strv {
    char **v;
    size_t n, cap;
};

void dlb_strv_free(char **v, size_t n)
{
    for (size_t k = 0; k < n; k++)
        free(v[k]);
    free(v);
}

/* Validate `text` for the axis and append its canonical text, refusing a
 * value the list already has: it would give two identical configurations. */
static dlb_status push_item(struct strv *sv, const struct dlb_param_def *d,
                            const char *text, char *why, size_t len)
{
    struct dlb_value v;
    dlb_status st = dlb_param_parse(d, text, &v, why, len);
    if (st != DLB_OK)
        return st;
    for (size_t k = 0; k < sv->n; k++) {
        if (strcmp(sv->v[k], v.s) == 0) {
            st = dlb_param_whyf(why, len, "value %s appears twice in the list", v.s);
            dlb_value_clear(&v);
            return st;
        }
    }
    if (sv->n == DLB_AXIS_MAX_ITEMS) {
        dlb_value_clear(&v);
        return dlb_param_whyf(why, len, "the list has more than %d values",
                     DLB_AXIS_MAX_ITEMS);
    }
    if (sv->n == sv->cap) {
        size_t cap = sv->cap ? 2 * sv->cap : 8;
        char **nv = realloc(sv->v, cap * sizeof *nv);
        if (!nv) {
            dlb_value_clear(&v);
            return dlb_param_whyf(why, len, "out of memory");
        }
        sv->v = nv;
        sv->cap = cap;
    }
    sv->v[sv->n++] = (char *)v.s;
    return DLB_OK;
}

static dlb_status bad_range(const char *text, char *why, size_t len)
{
    return dlb_param_whyf(why, len,
                 "expected a range START:END:STEP such as 16:1024:x2 "
                 "(geometric) or 1:10:+3 (arithmetic), got \"%s\"",
                 text);
}

/* Numbers of a range in the type's notation: bytes for SIZE, seconds for
 * TIME, so that "4K:1M:x2" and "100ms:1s:+100ms" work. */
static int range_number(const struct dlb_param_def *d, const char *s,
                        double *out)
{
    struct dlb_param_def plain = *d;
    struct dlb_value v;
    plain.flags = 0;
    if (dlb_param_parse(&plain, s, &v, NULL, 0) != DLB_OK)
        return 0;
    *out = v.f;
    dlb_value_clear(&v);
    return 1;
}

static dlb_status push_number(struct strv *sv, const struct dlb_param_def *d,
                              double x, char *why, size_t len)
{
    char buf[64];
    if (d->type == DLB_PARAM_INT || d->type == DLB_PARAM_SIZE)
        snprintf(buf, sizeof buf, "%.0f", nearbyint(x));
    else /* 12 digits hide the drift of repeated float steps */
        snprintf(buf, sizeof buf, "%.12g", x);
    return push_item(sv, d, buf, why, len);
}

static dlb_status expand_range(struct strv *sv, const struct dlb_param_def *d,
                               const char *text, char *why, size_t len)
{
    char *s = strdup(text);
    if (!s)
        return dlb_param_whyf(why, len, "out of memory");
    char *c1 = strchr(s, ':');
    char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || !c2 || strchr(c2 + 1, ':')) {
        free(s);
        return bad_range(text, why, len);
    }
    *c1 = *c2 = '\0';
    char *a = dlb_strdup_trimmed(s), *b = dlb_strdup_trimmed(c1 + 1),
         *st = dlb_strdup_trimmed(c2 + 1);
    free(s);
    dlb_status rc = DLB_OK;
    double lo = 0, hi = 0, step = 0;
    int geometric = st && (st[0] == 'x' || st[0] == '*');
    if (!a || !b || !st) {
        rc = dlb_param_whyf(why, len, "out of memory");
    } else if (!range_number(d, a, &lo) || !range_number(d, b, &hi)) {
        /* Let the item parser say what a start or end must look like. */
        struct dlb_value v;
        const char *bad = range_number(d, a, &lo) ? b : a;
        rc = dlb_param_parse(d, bad, &v, why, len);
        if (rc == DLB_OK) {
            dlb_value_clear(&v);
            rc = bad_range(text, why, len);
        }
    } else if (geometric) {
        static const struct dlb_param_def factor = {
            "factor", DLB_PARAM_FLOAT, "2",
            DLB_PARAM_HAS_MIN | DLB_PARAM_MIN_EXCLUSIVE, 1, 0, NULL, NULL,
            "growth factor"};
        struct dlb_value f;
        if (dlb_param_parse(&factor, st + 1, &f, NULL, 0) != DLB_OK)
            rc =
                dlb_param_whyf(why, len,
                      "range \"%s\": the factor after 'x' must be a number > 1",
                      text);
        else {
            step = f.f;
            dlb_value_clear(&f);
        }
        if (rc == DLB_OK && lo <= 0)
            rc = dlb_param_whyf(why, len,
                       "range \"%s\": a geometric range must start above 0",
                       text);
    } else if (!range_number(d, st[0] == '+' ? st + 1 : st, &step) ||
               step <= 0) {
        rc = dlb_param_whyf(why, len,
                   "range \"%s\": the step must be > 0 (\"+3\" or \"3\" adds, "
                   "\"x2\" multiplies)",
                   text);
    }
    if (rc == DLB_OK && lo > hi)
        rc = dlb_param_whyf(why, len,
                   "range \"%s\" runs backwards; START must be <= END", text);
    /* Float steps drift: allow the end point within a relative hair. */
    double slack = 1e-9 * (fabs(hi) > 1.0 ? fabs(hi) : 1.0);
    int integral = d->type == DLB_PARAM_INT || d->type == DLB_PARAM_SIZE;
    double last = -1.0;
    for (long k = 0; rc == DLB_OK; k++) {
        double x =
            geometric ? lo * pow(step, (double)k) : lo + (double)k * step;
        if (x > hi + slack)
            break;
        if (x > hi)
            x = hi;
        if (k >= DLB_AXIS_MAX_ITEMS) {
            rc = dlb_param_whyf(why, len, "range \"%s\" gives more than %d values", text,
                       DLB_AXIS_MAX_ITEMS);
            break;
        }
        /* A small factor on integers repeats values (x1.2 from 1). */
        if (integral && nearbyint(x) == last)
            continue;
        last = integral ? nearbyint(x) : x;
        rc = push_number(sv, d, x, why, len);
    }
    free(a);
    free(b);
    free(st);
    return rc;
}

dlb_status dlb_axis_expand(const struct dlb_param_def *def, const char *text,
                           char ***items, size_t *n, char *why, size_t why_len)
{
    struct strv sv = {NULL, 0, 0};
    char *s = dlb_strdup_trimmed(text ? text : "");
    if (!s)
        return dlb_param_whyf(why, why_len, "out of memory");
    dlb_status rc = DLB_OK;
    if (!*s)
        rc = dlb_param_whyf(why, why_len,
                   "empty list; expected values separated by commas or a range "
                   "START:END:STEP");
    char *p = s;
    while (rc == DLB_OK) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        char *item = dlb_strdup_trimmed(p);
        if (!item)
            rc = dlb_param_whyf(why, why_len, "out of memory");
        else if (!*item)
            rc = dlb_param_whyf(why, why_len, "empty item in the list \"%s\"", text);
        else if (is_numeric(def->type) && strchr(item, ':'))
            rc = expand_range(&sv, def, item, why, why_len);
        else
            rc = push_item(&sv, def, item, why, why_len);
        free(item);
        if (!comma)
            break;
        p = comma + 1;
    }
    free(s);
    if (rc != DLB_OK) {
        dlb_strv_free(sv.v, sv.n);
        return rc;
    }
    *items = sv.v;
    *n = sv.n;
    return DLB_OK;
}
