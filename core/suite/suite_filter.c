/* [sweep] filters: `skip = batch=1024 amp.precision=fp16|bf16` drops the
 * configurations where every term matches; `only = ...` keeps only those.
 * Values are validated like axis items, so a typo cannot silently match
 * nothing. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite/param.h"
#include "suite/suite.h"

static void free_terms(struct dlb_filter_term *t, size_t n)
{
    for (size_t k = 0; k < n; k++)
        dlb_strv_free(t[k].items, t[k].n);
    free(t);
}

/* Append the canonical texts of `piece` (a value, or a range) to t. */
static dlb_status add_values(struct dlb_filter_term *t,
                             const struct dlb_param_def *d, const char *piece,
                             char *why, size_t len)
{
    char **items;
    size_t n;
    dlb_status st = dlb_axis_expand(d, piece, &items, &n, why, len);
    if (st != DLB_OK)
        return st;
    char **v = realloc(t->items, (t->n + n) * sizeof *v);
    if (!v) {
        dlb_strv_free(items, n);
        snprintf(why, len, "out of memory");
        return DLB_ERR_NOMEM;
    }
    memcpy(v + t->n, items, n * sizeof *items);
    free(items);
    t->items = v;
    t->n += n;
    return DLB_OK;
}

/* Parse "key=a|b" or "key!=a" into t; on failure why says what is wrong. */
static dlb_status parse_term(const struct dlb_suite *s, char *term,
                             struct dlb_filter_term *t, char *why, size_t len)
{
    char *eq = strchr(term, '=');
    if (!eq) {
        snprintf(why, len,
                 "term \"%s\" has no '='; expected KEY=VALUE or KEY!=VALUE",
                 term);
        return DLB_ERR_INPUT;
    }
    t->negate = eq > term && eq[-1] == '!';
    char *key_end = t->negate ? eq - 1 : eq;
    if (key_end == term || !eq[1]) {
        snprintf(why, len,
                 "term \"%s\" needs a key and a value, as in batch=1024", term);
        return DLB_ERR_INPUT;
    }
    *key_end = '\0';
    struct dlb_error inner = {""};
    if (dlb_suite_resolve_key(s, term, &t->ref, &inner) != DLB_OK) {
        snprintf(why, len, "%s", inner.msg);
        return DLB_ERR_INPUT;
    }
    const struct dlb_param_def *d = &s->ns[t->ref.ns].defs[t->ref.param];
    char *save = NULL;
    for (char *piece = strtok_r(eq + 1, "|", &save); piece;
         piece = strtok_r(NULL, "|", &save)) {
        char inner_why[512];
        dlb_status st = add_values(t, d, piece, inner_why, sizeof inner_why);
        if (st != DLB_OK) {
            snprintf(why, len, "%s: %s", term, inner_why);
            return st;
        }
    }
    if (t->n == 0) {
        snprintf(why, len,
                 "%s: no value; expected KEY=VALUE or KEY=VALUE|VALUE", term);
        return DLB_ERR_INPUT;
    }
    return DLB_OK;
}

dlb_status dlb_suite_add_filter(struct dlb_suite *s, int only,
                                const char *value, int line,
                                struct dlb_error *err)
{
    const char *what = only ? "only" : "skip";
    struct dlb_filter f = {only, NULL, 0, line};
    char why[768] = "";
    dlb_status st = DLB_OK;
    char *copy = strdup(value);
    if (!copy)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    char *save = NULL;
    for (char *term = strtok_r(copy, " \t", &save); term && st == DLB_OK;
         term = strtok_r(NULL, " \t", &save)) {
        struct dlb_filter_term *v = realloc(f.terms, (f.n + 1) * sizeof *v);
        if (!v) {
            st = DLB_ERR_NOMEM;
            snprintf(why, sizeof why, "out of memory");
            break;
        }
        f.terms = v;
        f.terms[f.n] = (struct dlb_filter_term){{0, 0}, NULL, 0, 0};
        st = parse_term(s, term, &f.terms[f.n], why, sizeof why);
        f.n++;
    }
    free(copy);
    if (st == DLB_OK && f.n == 0) {
        st = DLB_ERR_INPUT;
        snprintf(why, sizeof why,
                 "empty filter; expected KEY=VALUE terms such as batch=1024 "
                 "amp.precision=fp16|bf16");
    }
    if (st == DLB_OK) {
        struct dlb_filter *v =
            realloc(s->filters, (s->n_filters + 1) * sizeof *v);
        if (v) {
            s->filters = v;
            s->filters[s->n_filters++] = f;
            return DLB_OK;
        }
        st = DLB_ERR_NOMEM;
        snprintf(why, sizeof why, "out of memory");
    }
    free_terms(f.terms, f.n);
    return dlb_errorf(err, st, "%s:%d: %s: %s", s->path, line, what, why);
}
