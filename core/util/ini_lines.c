#include "util/ini_lines.h"

#include <ini.h>
#include <stdio.h>
#include <string.h>

struct ini_reader {
    const char *buf;
    size_t len, pos;
    int line, at_line_start;
    const struct dlb_ini_sink *sink;
    void *user;
    dlb_status st;       /* a callback's status, once one failed */
    int st_line;
};

/* inih's behaviour varies with these options, and Debian's build exports
 * them as variables: pin them so every build reads files the same way. */
static void pin_inih_options(int max_line)
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
    ini_max_line = max_line;
}

/* The reader sees every line, so it reports section headers itself. */
static void note_section(struct ini_reader *R, size_t start)
{
    const char *p = R->buf + start, *end = R->buf + R->len, *q;
    if (start == 0 && R->len >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
        p += 3;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p == end || *p != '[')
        return;
    for (q = p + 1; q < end && *q != ']' && *q != '\n'; q++)
        ;
    if (q == end || *q != ']')
        return; /* inih reports the malformed line */
    dlb_status st = R->sink->section(R->user, p + 1, (size_t)(q - p - 1), R->line);
    if (st != DLB_OK && R->st == DLB_OK) {
        R->st = st;
        R->st_line = R->line;
    }
}

/* fgets-style reader that counts lines: inih calls the handler for a line
 * right after the reader returned it. */
static char *read_line(char *str, int num, void *stream)
{
    struct ini_reader *R = stream;
    if (R->st != DLB_OK || R->pos >= R->len || num < 2)
        return NULL;
    size_t start = R->pos, k = 0;
    while (k + 1 < (size_t)num && R->pos < R->len) {
        char c = R->buf[R->pos++];
        str[k++] = c;
        if (c == '\n')
            break;
    }
    str[k] = '\0';
    if (R->at_line_start) {
        R->line++;
        note_section(R, start);
    }
    R->at_line_start = str[k - 1] == '\n';
    return str;
}

static int on_key(void *user, const char *section, const char *name,
                  const char *value)
{
    struct ini_reader *R = user;
    if (R->st != DLB_OK)
        return 0;
    dlb_status st = R->sink->key(R->user, section, name, value, R->line);
    if (st != DLB_OK) {
        R->st = st;
        R->st_line = R->line;
    }
    return st == DLB_OK;
}

static dlb_status syntax(int *bad_line, int line, char *why, size_t len,
                         const char *fmt, const char *detail, int n)
{
    *bad_line = line;
    snprintf(why, len, fmt, n, detail);
    return DLB_ERR_INPUT;
}

dlb_status dlb_ini_parse(const char *buf, size_t len, int max_line,
                         const char *what, const struct dlb_ini_sink *sink,
                         void *user, int *bad_line, char *why, size_t why_len)
{
    /* inih would split an over-long line in two and cannot see past a NUL:
     * refuse both with the line. */
    int line = 1;
    size_t line_len = 0;
    for (size_t k = 0; k < len; k++) {
        if (buf[k] == '\0') {
            *bad_line = line;
            snprintf(why, why_len, "NUL byte; %s is a text file", what);
            return DLB_ERR_INPUT;
        }
        if (buf[k] == '\n') {
            line++;
            line_len = 0;
        } else if (++line_len > (size_t)max_line - 3) {
            *bad_line = line;
            snprintf(why, why_len, "line longer than %d characters", max_line - 3);
            return DLB_ERR_INPUT;
        }
    }
    struct ini_reader R = {buf, len, 0, 0, 1, sink, user, DLB_OK, 0};
    pin_inih_options(max_line);
    int rc = ini_parse_stream(read_line, &R, on_key, &R);
    if (R.st != DLB_OK) {
        *bad_line = R.st_line;
        return R.st;
    }
    if (rc == -2) {
        *bad_line = R.line;
        snprintf(why, why_len, "out of memory");
        return DLB_ERR_NOMEM;
    }
    if (rc > 0) {
        const char *p = buf, *end = buf + len;
        for (int k = 1; k < rc && p < end; k++) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            p = nl ? nl + 1 : end;
        }
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        int n = (int)((nl ? nl : end) - p);
        if (n > 0 && p[n - 1] == '\r')
            n--;
        return syntax(bad_line, rc, why, why_len,
                      "malformed line \"%.*s\"; expected [section], "
                      "KEY = VALUE or a ; comment", p, n > 80 ? 80 : n);
    }
    return DLB_OK;
}
