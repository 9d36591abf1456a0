/* Typed parameters: parsing with "expected ..." messages, canonical texts
 * and "did you mean". Table checks and help: param_table.c; sweep axes:
 * param_axis.c. */
#define _POSIX_C_SOURCE 200809L
#include "suite/param.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

dlb_status dlb_param_whyf(char *why, size_t len, const char *fmt, ...)
{
    if (why && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
    }
    return DLB_ERR_INPUT;
}

const char *dlb_param_type_name(enum dlb_param_type t)
{
    switch (t) {
    case DLB_PARAM_INT: return "int";
    case DLB_PARAM_FLOAT: return "float";
    case DLB_PARAM_BOOL: return "bool";
    case DLB_PARAM_ENUM: return "enum";
    case DLB_PARAM_SIZE: return "size";
    case DLB_PARAM_STRING: return "string";
    case DLB_PARAM_TIME: return "time";
    }
    return "unknown";
}

/* ---- canonical texts ------------------------------------------------- */

/* The shortest %g text that reads back as exactly v, so that canonical
 * texts compare equal whenever the values do; a whole number as one
 * ("80", not %g's "8e+01"). */
static void fmt_double(char *buf, size_t len, double v)
{
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, len, "%.0f", v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static void fmt_size(char *buf, size_t len, int64_t bytes)
{
    static const char *const units[] = {"TiB", "GiB", "MiB", "KiB"};
    for (int k = 0; k < 4; k++) {
        int64_t m = (int64_t)1 << (10 * (4 - k));
        if (bytes != 0 && bytes % m == 0) {
            snprintf(buf, len, "%" PRId64 "%s", bytes / m, units[k]);
            return;
        }
    }
    snprintf(buf, len, "%" PRId64, bytes);
}

/* Near-integer test for choosing a time unit: 0.2 s is 200 ms, not
 * 199.99999999999997 ms. */
static int near_integer(double x)
{
    return x >= 1.0 && fabs(x - nearbyint(x)) <= 1e-9 * x;
}

static void fmt_time(char *buf, size_t len, double sec)
{
    static const struct { const char *name; double scale; } units[] = {
        {"h", 3600.0}, {"min", 60.0}, {"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6},
        {"ns", 1e-9}
    };
    if (sec == 0.0) {
        snprintf(buf, len, "0s");
        return;
    }
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
        double x = sec / units[k].scale;
        if (near_integer(x) && x < 1e15) {
            snprintf(buf, len, "%.0f%s", nearbyint(x), units[k].name);
            return;
        }
    }
    char num[32];
    fmt_double(num, sizeof num, sec);
    snprintf(buf, len, "%ss", num);
}

/* A bound (stored as double in the table) in the type's own notation. */
static void fmt_bound(char *buf, size_t len, enum dlb_param_type t, double v)
{
    switch (t) {
    case DLB_PARAM_INT: snprintf(buf, len, "%.0f", v); break;
    case DLB_PARAM_SIZE: fmt_size(buf, len, (int64_t)v); break;
    case DLB_PARAM_TIME: fmt_time(buf, len, v); break;
    default: fmt_double(buf, len, v); break;
    }
}

void dlb_param_describe(const struct dlb_param_def *d, char *buf, size_t len)
{
    const char *noun = d->type == DLB_PARAM_INT    ? "an integer"
                       : d->type == DLB_PARAM_SIZE ? "a size"
                       : d->type == DLB_PARAM_TIME ? "a time"
                                                   : "a number";
    int lo = (d->flags & DLB_PARAM_HAS_MIN) != 0;
    int hi = (d->flags & DLB_PARAM_HAS_MAX) != 0;
    int lo_x = lo && (d->flags & DLB_PARAM_MIN_EXCLUSIVE);
    int hi_x = hi && (d->flags & DLB_PARAM_MAX_EXCLUSIVE);
    char a[64], b[64];
    fmt_bound(a, sizeof a, d->type, d->min);
    fmt_bound(b, sizeof b, d->type, d->max);
    if (lo && hi && !lo_x && !hi_x)
        snprintf(buf, len, "%s between %s and %s", noun, a, b);
    else if (lo && hi)
        snprintf(buf, len, "%s %s %s and %s %s", noun, lo_x ? ">" : ">=", a,
                 hi_x ? "<" : "<=", b);
    else if (lo)
        snprintf(buf, len, "%s %s %s", noun, lo_x ? ">" : ">=", a);
    else if (hi)
        snprintf(buf, len, "%s %s %s", noun, hi_x ? "<" : "<=", b);
    else
        snprintf(buf, len, "%s", noun);
}

static const char *syntax_hint(enum dlb_param_type t)
{
    if (t == DLB_PARAM_SIZE)
        return " (such as 512, 4K, 2MiB or 1.5G; units are binary)";
    if (t == DLB_PARAM_TIME)
        return " (such as 500ms, 2s, 10us or 1min; a bare number is seconds)";
    return "";
}

static dlb_status fail_expected(const struct dlb_param_def *d, const char *text,
                                int syntax, char *why, size_t len)
{
    char what[256];
    dlb_param_describe(d, what, sizeof what);
    return dlb_param_whyf(why, len, "expected %s%s, got \"%s\"", what,
                 syntax ? syntax_hint(d->type) : "", text);
}

static int in_bounds(const struct dlb_param_def *d, double v)
{
    if (d->flags & DLB_PARAM_HAS_MIN) {
        if (v < d->min || ((d->flags & DLB_PARAM_MIN_EXCLUSIVE) && v == d->min))
            return 0;
    }
    if (d->flags & DLB_PARAM_HAS_MAX) {
        if (v > d->max || ((d->flags & DLB_PARAM_MAX_EXCLUSIVE) && v == d->max))
            return 0;
    }
    return 1;
}

/* ---- number parsing -------------------------------------------------- */

/* Plain decimal only: strtod alone would also take "inf", "nan" and hex. */
static int parse_decimal(const char *s, double *out, const char **end)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (!isdigit((unsigned char)*p) &&
        !(*p == '.' && isdigit((unsigned char)p[1])))
        return 0;
    errno = 0;
    char *e;
    double v = strtod(s, &e);
    if (errno == ERANGE || !isfinite(v))
        return 0;
    for (const char *q = s; q < e; q++)
        if (!strchr("0123456789+-.eE", *q))
            return 0;
    *out = v;
    *end = e;
    return 1;
}

static int parse_int(const char *s, int64_t *out)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (!*p)
        return 0;
    for (const char *q = p; *q; q++)
        if (!isdigit((unsigned char)*q))
            return 0;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE)
        return 0;
    *out = v;
    return 1;
}

static int parse_suffixed(const char *s, double *num, const char **suffix)
{
    const char *e;
    if (!parse_decimal(s, num, &e))
        return 0;
    while (isspace((unsigned char)*e))
        e++;
    *suffix = e;
    return 1;
}

static int parse_size(const char *s, int64_t *out)
{
    static const struct { const char *name; int shift; } units[] = {
        {"", 0}, {"b", 0}, {"k", 10}, {"kb", 10}, {"kib", 10}, {"m", 20},
        {"mb", 20}, {"mib", 20}, {"g", 30}, {"gb", 30}, {"gib", 30},
        {"t", 40}, {"tb", 40}, {"tib", 40}
    };
    double v;
    const char *suf;
    if (!parse_suffixed(s, &v, &suf) || v < 0)
        return 0;
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
        if (strcasecmp(suf, units[k].name) == 0) {
            double bytes = nearbyint(v * ldexp(1.0, units[k].shift));
            if (bytes >= 9.2e18)
                return 0;
            *out = (int64_t)bytes;
            return 1;
        }
    }
    return 0;
}

static int parse_time(const char *s, double *out)
{
    static const struct { const char *name; double scale; } units[] = {
        {"", 1.0}, {"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9},
        {"min", 60.0}, {"h", 3600.0}
    };
    double v;
    const char *suf;
    if (!parse_suffixed(s, &v, &suf) || v < 0)
        return 0;
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
        if (strcasecmp(suf, units[k].name) == 0) {
            *out = v * units[k].scale;
            return 1;
        }
    }
    return 0;
}

static int parse_bool(const char *s, int64_t *out)
{
    static const char *const yes[] = {"on", "true", "yes", "1"};
    static const char *const no[] = {"off", "false", "no", "0"};
    for (int k = 0; k < 4; k++) {
        if (strcasecmp(s, yes[k]) == 0) { *out = 1; return 1; }
        if (strcasecmp(s, no[k]) == 0) { *out = 0; return 1; }
    }
    return 0;
}

static size_t count_choices(const char *const *c)
{
    size_t n = 0;
    while (c && c[n])
        n++;
    return n;
}

/* A choice written "word:PLACEHOLDER" (colon, then capitals: folder:PATH)
 * takes "word:" followed by any text; the length of "word:", else 0. */
static size_t choice_prefix(const char *choice)
{
    const char *colon = strchr(choice, ':');
    if (!colon || !colon[1])
        return 0;
    for (const char *p = colon + 1; *p; p++)
        if (!isupper((unsigned char)*p) && *p != '_')
            return 0;
    return (size_t)(colon + 1 - choice);
}

static dlb_status parse_enum(const struct dlb_param_def *d, const char *s,
                             struct dlb_value *v, char *why, size_t len)
{
    size_t n = count_choices(d->choices);
    for (size_t k = 0; k < n; k++) {
        /* Case is forgiven, and the canonical text is the table's; a
         * prefix choice keeps the text after its prefix as given. */
        size_t pre = choice_prefix(d->choices[k]);
        if (pre ? strncasecmp(s, d->choices[k], pre) == 0 && s[pre]
                : strcasecmp(s, d->choices[k]) == 0) {
            v->i = (int64_t)k;
            v->s = d->choices[k];
            if (pre) { /* s is dlb_param_parse's own trimmed copy */
                memcpy((char *)s, d->choices[k], pre);
                v->s = s;
            }
            return DLB_OK;
        }
    }
    char list[512] = "";
    for (size_t k = 0; k < n; k++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", k ? ", " : "",
                 d->choices[k]);
    }
    const char *best = dlb_suggest(s, d->choices, n);
    if (best)
        return dlb_param_whyf(why, len, "expected one of %s, got \"%s\" (did you mean "
                     "'%s'?)", list, s, best);
    return dlb_param_whyf(why, len, "expected one of %s, got \"%s\"", list, s);
}

char *dlb_strdup_trimmed(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    char *r = malloc(n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = '\0';
    }
    return r;
}

/* Parse trimmed text into v; v->s points to static or table text, or is
 * NULL when the canonical text is to be formatted from the number. */
static dlb_status parse_value(const struct dlb_param_def *d, const char *s,
                              struct dlb_value *v, char *why, size_t len)
{
    switch (d->type) {
    case DLB_PARAM_STRING:
        v->s = s;
        return DLB_OK;
    case DLB_PARAM_BOOL:
        if (!parse_bool(s, &v->i))
            return dlb_param_whyf(why, len, "expected on/off, true/false, yes/no or "
                         "1/0, got \"%s\"", s);
        v->s = v->i ? "on" : "off";
        return DLB_OK;
    case DLB_PARAM_ENUM:
        return parse_enum(d, s, v, why, len);
    case DLB_PARAM_INT:
        if (!parse_int(s, &v->i))
            return fail_expected(d, s, 1, why, len);
        v->f = (double)v->i;
        break;
    case DLB_PARAM_SIZE:
        if (!parse_size(s, &v->i))
            return fail_expected(d, s, 1, why, len);
        v->f = (double)v->i;
        break;
    case DLB_PARAM_FLOAT: {
        const char *e;
        if (!parse_decimal(s, &v->f, &e) || *e)
            return fail_expected(d, s, 1, why, len);
        break;
    }
    case DLB_PARAM_TIME:
        if (!parse_time(s, &v->f))
            return fail_expected(d, s, 1, why, len);
        break;
    default:
        return dlb_param_whyf(why, len, "parameter '%s' has an unknown type %d",
                     d->name ? d->name : "?", (int)d->type);
    }
    if (!in_bounds(d, v->f))
        return fail_expected(d, s, 0, why, len);
    return DLB_OK;
}

dlb_status dlb_param_parse(const struct dlb_param_def *def, const char *text,
                           struct dlb_value *out, char *why, size_t why_len)
{
    struct dlb_value v = {0, 0.0, NULL};
    char *s = dlb_strdup_trimmed(text ? text : "");
    if (!s)
        return dlb_param_whyf(why, why_len, "out of memory");
    dlb_status st = parse_value(def, s, &v, why, why_len);
    if (st == DLB_OK) {
        char buf[64];
        if (!v.s) {
            if (def->type == DLB_PARAM_INT)
                snprintf(buf, sizeof buf, "%" PRId64, v.i);
            else if (def->type == DLB_PARAM_SIZE)
                fmt_size(buf, sizeof buf, v.i);
            else if (def->type == DLB_PARAM_TIME)
                fmt_time(buf, sizeof buf, v.f);
            else
                fmt_double(buf, sizeof buf, v.f);
            v.s = buf;
        }
        char *canon = strdup(v.s);
        if (!canon)
            st = dlb_param_whyf(why, why_len, "out of memory");
        v.s = canon;
    }
    free(s);
    if (st == DLB_OK)
        *out = v;
    return st;
}

void dlb_value_clear(struct dlb_value *v)
{
    if (!v)
        return;
    free((char *)v->s);
    v->s = NULL;
    v->i = 0;
    v->f = 0.0;
}

dlb_status dlb_value_copy(struct dlb_value *dst, const struct dlb_value *src)
{
    char *s = NULL;
    if (src->s && !(s = strdup(src->s)))
        return DLB_ERR_NOMEM;
    dst->i = src->i;
    dst->f = src->f;
    dst->s = s;
    return DLB_OK;
}

int dlb_param_find(const struct dlb_param_def *defs, unsigned n,
                   const char *name)
{
    for (unsigned k = 0; k < n; k++)
        if (defs[k].name && strcmp(defs[k].name, name) == 0)
            return (int)k;
    return -1;
}

/* ---- did you mean ---------------------------------------------------- */

/* Edit distance where swapping two adjacent letters counts as one edit
 * (optimal string alignment): "bacth" is one typo away from "batch". */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t *rows = malloc(3 * (lb + 1) * sizeof *rows);
    if (!rows)
        return (size_t)-1;
    size_t *prev2 = rows, *prev = rows + lb + 1, *cur = rows + 2 * (lb + 1);
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t best = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < best)
                best = prev2[j - 2] + 1;
            cur[j] = best;
        }
        size_t *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    size_t d = prev[lb];
    free(rows);
    return d;
}

const char *dlb_suggest(const char *name, const char *const *candidates,
                        size_t n)
{
    size_t len = strlen(name);
    size_t limit = len / 3 > 1 ? len / 3 : 1;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (size_t k = 0; k < n; k++) {
        if (!candidates[k])
            continue;
        size_t d = edit_distance(name, candidates[k]);
        if (d < best_d) {
            best_d = d;
            best = candidates[k];
        }
    }
    return best;
}

