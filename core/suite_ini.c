/* Pass 1 of the suite loader: inih, pinned to fixed options, with a reader
 * that counts lines and sees section headers. */
#define _POSIX_C_SOURCE 200809L
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite_load.h"

#define DLB_SUITE_MAX_LINE 4096

/* inih's behaviour varies with these options, and Debian's build exports
 * them as variables: pin them so every build reads suites the same way. */
static void pin_inih_options(void)
{
    static char start_comments[] = ";#";
    static char inline_comments[] = ";#";
    ini_allow_multiline = false;
    ini_allow_bom = true;
    ini_start_comment_prefixes = start_comments;
    ini_allow_inline_comments = true;
    ini_inline_comment_prefixes = inline_comments;
    ini_stop_on_first_error = true;
    ini_allow_no_value = false;
    ini_use_stack = false;
    ini_allow_realloc = true;
    ini_initial_alloc = 256;
    ini_max_line = DLB_SUITE_MAX_LINE;
}

static dlb_status push_entry(struct dlb_suite_loader *L, const char *section,
                             const char *key, const char *value, int line)
{
    if (L->n_ents == L->cap) {
        size_t cap = L->cap ? 2 * L->cap : 32;
        struct dlb_suite_entry *e = realloc(L->ents, cap * sizeof *e);
        if (!e)
            return dlb_suite_fail_at(L, line, DLB_ERR_NOMEM, "out of memory");
        L->ents = e;
        L->cap = cap;
    }
    struct dlb_suite_entry *e = &L->ents[L->n_ents];
    e->section = strdup(section);
    e->key = key ? strdup(key) : NULL;
    e->value = value ? strdup(value) : NULL;
    e->line = line;
    L->n_ents++;
    if (!e->section || (key && !e->key) || (value && !e->value))
        return dlb_suite_fail_at(L, line, DLB_ERR_NOMEM, "out of memory");
    return DLB_OK;
}

/* inih does not report empty sections; the reader sees every line, so it
 * records section headers itself. */
static void note_section(struct dlb_suite_loader *L, size_t start)
{
    const char *p = L->buf + start, *end = L->buf + L->len;
    if (start == 0 && L->len >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
        p += 3;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p == end || *p != '[')
        return;
    const char *q = p + 1;
    while (q < end && *q != ']' && *q != '\n')
        q++;
    if (q == end || *q != ']')
        return; /* inih reports the malformed line */
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(q - p - 1), p + 1);
    push_entry(L, name, NULL, NULL, L->line);
}

/* fgets-style reader over the file's bytes that counts lines: inih calls
 * the handler for a line right after the reader returned it. */
static char *read_line(char *str, int num, void *stream)
{
    struct dlb_suite_loader *L = stream;
    if (L->st != DLB_OK || L->pos >= L->len || num < 2)
        return NULL;
    size_t start = L->pos, k = 0;
    while (k + 1 < (size_t)num && L->pos < L->len) {
        char c = L->buf[L->pos++];
        str[k++] = c;
        if (c == '\n')
            break;
    }
    str[k] = '\0';
    if (L->at_line_start) {
        L->line++;
        note_section(L, start);
    }
    L->at_line_start = str[k - 1] == '\n';
    return str;
}

static int on_key(void *user, const char *section, const char *name,
                  const char *value)
{
    struct dlb_suite_loader *L = user;
    if (L->st != DLB_OK)
        return 0;
    if (!*section)
        dlb_suite_fail_at(L, L->line, DLB_ERR_INPUT,
                          "key '%s' comes before any section; put it under "
                          "[suite], [sweep], [quick] or a plugin's [NAME]",
                          name);
    else if (!*name)
        dlb_suite_fail_at(L, L->line, DLB_ERR_INPUT,
                          "empty key; expected KEY = VALUE");
    else
        push_entry(L, section, name, value, L->line);
    return L->st == DLB_OK;
}

/* Refuse what inih would silently mangle: NUL bytes and lines too long
 * for its buffer (it would split them into two lines). */
static dlb_status check_text(struct dlb_suite_loader *L)
{
    int line = 1;
    size_t line_len = 0;
    for (size_t k = 0; k < L->len; k++) {
        if (L->buf[k] == '\0')
            return dlb_suite_fail_at(L, line, DLB_ERR_INPUT,
                                     "NUL byte; a suite is a text file");
        if (L->buf[k] == '\n') {
            line++;
            line_len = 0;
        } else if (++line_len > DLB_SUITE_MAX_LINE - 3) {
            return dlb_suite_fail_at(L, line, DLB_ERR_INPUT,
                                     "line longer than %d characters",
                                     DLB_SUITE_MAX_LINE - 3);
        }
    }
    return DLB_OK;
}

dlb_status dlb_suite_read_ini(struct dlb_suite_loader *L)
{
    if (check_text(L) != DLB_OK)
        return L->st;
    pin_inih_options();
    L->at_line_start = 1;
    int rc = ini_parse_stream(read_line, L, on_key, L);
    if (L->st != DLB_OK)
        return L->st;
    if (rc == -2)
        return dlb_suite_fail_at(L, L->line, DLB_ERR_NOMEM, "out of memory");
    if (rc > 0) {
        const char *p = L->buf, *end = L->buf + L->len;
        for (int k = 1; k < rc && p < end; k++) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            p = nl ? nl + 1 : end;
        }
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        int n = (int)((nl ? nl : end) - p);
        if (n > 0 && p[n - 1] == '\r')
            n--;
        return dlb_suite_fail_at(L, rc, DLB_ERR_INPUT,
                                 "malformed line \"%.*s\"; expected [section], "
                                 "KEY = VALUE or a ; comment",
                                 n > 80 ? 80 : n, p);
    }
    return DLB_OK;
}
