#include "plan/plan_search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


dlb_status dlb_search_parse(const char *text, struct dlb_search *out,
                            char *why, size_t why_len)
{
    out->n = 0;
    out->halving_small = 0;
    out->halving_groups = 0;
    if (!strcmp(text, "grid")) {
        out->kind = DLB_SEARCH_GRID;
        return DLB_OK;
    }
    if (!strcmp(text, "halving")) {
        out->kind = DLB_SEARCH_HALVING;
        return DLB_OK;
    }
    char *end;
    if (!strncmp(text, "random:", 7) && text[7] >= '1' && text[7] <= '9') {
        unsigned long long n = strtoull(text + 7, &end, 10);
        if (!*end && n <= 100000) {
            out->kind = DLB_SEARCH_RANDOM;
            out->n = (size_t)n;
            return DLB_OK;
        }
    }
    snprintf(why, why_len, "expected grid, random:N (N >= 1) or halving, got "
             "\"%s\"", text);
    return DLB_ERR_INPUT;
}

void dlb_plan_key_where(const struct dlb_plan *p, enum dlb_core_key key,
                        char *buf, size_t len)
{
    const struct dlb_suite *s = p->suite;
    int k = (int)key;
    const char *name = s->ns[0].defs[key].name;
    const char *now = p->configs[0].values[0][key].s;
    int line = 0;
    for (size_t i = 0; i < s->n_fixed; i++)
        if (s->fixed[i].ref.ns == 0 && (int)s->fixed[i].ref.param == k)
            line = s->fixed[i].line;
    for (size_t i = 0; i < s->n_quick; i++)
        if (s->quick[i].ref.ns == 0 && (int)s->quick[i].ref.param == k &&
            !strcmp(s->quick[i].text, now))
            line = s->quick[i].line;
    if (line)
        snprintf(buf, len, "%s:%d: %s", s->path, line, name);
    else
        snprintf(buf, len, "--set %s", name);
}

dlb_status dlb_plan_check_search(const struct dlb_plan *p, struct dlb_error *err)
{
    struct dlb_search srch;
    char where[1200], why[512];
    const char *search = p->configs[0].core.search;
    if (dlb_search_parse(search, &srch, why, sizeof why) == DLB_OK)
        return DLB_OK;
    dlb_plan_key_where(p, DLB_KEY_search, where, sizeof where);
    return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s", where, why);
}
