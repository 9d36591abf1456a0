/* Parsing, formatting and help for the typed parameter tables of
 * <dlbench/param.h>; used by the suite parser and `plugin-help`. */
#ifndef DLB_CORE_PARAM_H
#define DLB_CORE_PARAM_H

#include <stddef.h>
#include <stdio.h>
#include <dlbench/param.h>
#include <dlbench/status.h>

/* DLB_PARAM_MIN_EXCLUSIVE and DLB_PARAM_MAX_EXCLUSIVE are public
 * (<dlbench/param.h>): the prune plugin's sparsity is below 1. */

/* Parse `text` for `def`. On success out->s is a malloc'ed canonical text
 * (release with dlb_value_clear). On failure `why` says what was expected,
 * e.g. "expected an integer between 1 and 4096, got \"abc\"". */
dlb_status dlb_param_parse(const struct dlb_param_def *def, const char *text,
                           struct dlb_value *out, char *why, size_t why_len);
void dlb_value_clear(struct dlb_value *v);
dlb_status dlb_value_copy(struct dlb_value *dst, const struct dlb_value *src);

const char *dlb_param_type_name(enum dlb_param_type t);

/* What a numeric parameter accepts, as used in "expected ..." messages:
 * "an integer between 1 and 4096", "a number > 0", "a time >= 0s". */
void dlb_param_describe(const struct dlb_param_def *def, char *buf, size_t len);

/* Check a table for mistakes a plugin author can make: empty or duplicate
 * names, defaults that do not parse, ENUM without choices, min > max. */
dlb_status dlb_param_table_check(const struct dlb_param_def *defs, unsigned n,
                                 char *why, size_t why_len);

/* Index of `name` in the table, or -1. */
int dlb_param_find(const struct dlb_param_def *defs, unsigned n, const char *name);

/* The candidate closest to `name` by edit distance when it is close enough
 * to be a likely misspelling, else NULL. */
const char *dlb_suggest(const char *name, const char *const *candidates, size_t n);

/* Print the table as plugin-help does: name, type, range or choices,
 * default, unit, help. */
void dlb_param_print_help(FILE *f, const struct dlb_param_def *defs, unsigned n);

/* Shared by the param_*.c files: write "why" and return DLB_ERR_INPUT;
 * and a malloc'ed copy of s without leading and trailing white space. */
dlb_status dlb_param_whyf(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
char *dlb_strdup_trimmed(const char *s);

/* Expand one sweep-axis value list: "a, b, c", and ranges for numeric types:
 * "16:1024:x2" (geometric), "1:10:+3" or "1:10:3" (arithmetic), inclusive.
 * Each item is validated with dlb_param_parse. *items is an array of
 * malloc'ed strings (free with dlb_strv_free). */
dlb_status dlb_axis_expand(const struct dlb_param_def *def, const char *text,
                           char ***items, size_t *n, char *why, size_t why_len);
void dlb_strv_free(char **v, size_t n);

#endif
