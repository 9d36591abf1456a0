/* Pass 1 of the suite loader: the INI text, with the line of every section
 * header and key (ini_lines.c), into the loader's list of entries. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/ini_lines.h"
#include "suite/suite_load.h"

#define DLB_SUITE_MAX_LINE 4096

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

static dlb_status on_section(void *user, const char *name, size_t len, int line)
{
    struct dlb_suite_loader *L = user;
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)len, name);
    return push_entry(L, buf, NULL, NULL, line);
}

static dlb_status on_key(void *user, const char *section, const char *name,
                         const char *value, int line)
{
    struct dlb_suite_loader *L = user;
    if (!*section)
        return dlb_suite_fail_at(L, line, DLB_ERR_INPUT,
                                 "key '%s' comes before any section; put it under "
                                 "[suite], [sweep], [quick] or a plugin's [NAME]",
                                 name);
    if (!*name)
        return dlb_suite_fail_at(L, line, DLB_ERR_INPUT,
                                 "empty key; expected KEY = VALUE");
    return push_entry(L, section, name, value, line);
}

dlb_status dlb_suite_read_ini(struct dlb_suite_loader *L)
{
    static const struct dlb_ini_sink sink = {on_section, on_key};
    char why[512];
    int line = 0;
    dlb_status st = dlb_ini_parse(L->buf, L->len, DLB_SUITE_MAX_LINE, "a suite",
                                  &sink, L, &line, why, sizeof why);
    if (st != DLB_OK && L->st == DLB_OK)
        return dlb_suite_fail_at(L, line, st, "%s", why);
    return L->st;
}
