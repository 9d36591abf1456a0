/* Checks of parameter tables (for plugin authors) and the help table that
 * `dlbench plugin-help NAME` prints. */
#include <ctype.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>

#include "suite/param.h"

static size_t count_choices(const char *const *c)
{
    size_t n = 0;
    while (c && c[n])
        n++;
    return n;
}

static int valid_name(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) &&
            *s != '_' && *s != '.')
            return 0;
    return 1;
}

static dlb_status check_def(const struct dlb_param_def *d, char *why,
                            size_t len)
{
    const char *nm = d->name;
    if (!valid_name(nm))
        return dlb_param_whyf(why, len,
                     "parameter name \"%s\" must be non-empty and use only "
                     "a-z, 0-9, '_' and '.'",
                     nm ? nm : "(null)");
    if ((unsigned)d->type > (unsigned)DLB_PARAM_TIME)
        return dlb_param_whyf(why, len, "parameter '%s': unknown type %d", nm,
                     (int)d->type);
    if (!d->help || !*d->help)
        return dlb_param_whyf(why, len,
                     "parameter '%s': no help text; plugin-help prints it", nm);
    if (d->type == DLB_PARAM_ENUM) {
        size_t n = count_choices(d->choices);
        if (n == 0)
            return dlb_param_whyf(
                why, len,
                "parameter '%s': an enum needs a NULL-terminated choices list",
                nm);
        for (size_t i = 0; i < n; i++) {
            if (!*d->choices[i])
                return dlb_param_whyf(why, len, "parameter '%s': empty choice", nm);
            for (size_t j = 0; j < i; j++)
                if (strcasecmp(d->choices[i], d->choices[j]) == 0)
                    return dlb_param_whyf(why, len,
                                 "parameter '%s': choice \"%s\" appears twice",
                                 nm, d->choices[i]);
        }
    }
    if ((d->flags & DLB_PARAM_HAS_MIN) && (d->flags & DLB_PARAM_HAS_MAX) &&
        d->min > d->max)
        return dlb_param_whyf(why, len, "parameter '%s': min %g is greater than max %g",
                     nm, d->min, d->max);
    if (!d->def && d->type != DLB_PARAM_STRING)
        return dlb_param_whyf(why, len, "parameter '%s': no default", nm);
    struct dlb_value v;
    char inner[256];
    if (dlb_param_parse(d, d->def ? d->def : "", &v, inner, sizeof inner) !=
        DLB_OK)
        return dlb_param_whyf(why, len,
                     "parameter '%s': default \"%s\" does not parse: %s", nm,
                     d->def, inner);
    dlb_value_clear(&v);
    return DLB_OK;
}

dlb_status dlb_param_table_check(const struct dlb_param_def *defs, unsigned n,
                                 char *why, size_t why_len)
{
    if (n > 0 && !defs)
        return dlb_param_whyf(why, why_len, "%u parameters but no table", n);
    for (unsigned k = 0; k < n; k++) {
        dlb_status st = check_def(&defs[k], why, why_len);
        if (st != DLB_OK)
            return st;
        for (unsigned j = 0; j < k; j++)
            if (strcmp(defs[j].name, defs[k].name) == 0)
                return dlb_param_whyf(why, why_len,
                             "parameter '%s' appears twice (entries %u and %u)",
                             defs[k].name, j, k);
    }
    return DLB_OK;
}

static void range_text(const struct dlb_param_def *d, char *buf, size_t len)
{
    if (d->type == DLB_PARAM_ENUM) {
        buf[0] = '\0';
        for (size_t k = 0; d->choices && d->choices[k]; k++) {
            size_t used = strlen(buf);
            snprintf(buf + used, len - used, "%s%s", k ? "|" : "",
                     d->choices[k]);
        }
    } else if (d->type == DLB_PARAM_BOOL) {
        snprintf(buf, len, "on|off");
    } else if (d->type != DLB_PARAM_STRING &&
               (d->flags & (DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX))) {
        char what[256];
        dlb_param_describe(d, what, sizeof what);
        /* Drop the noun: the type column already says it. */
        const char *sp = strchr(what, ' ');
        const char *rest = sp ? strchr(sp + 1, ' ') : NULL;
        snprintf(buf, len, "%s", rest ? rest + 1 : what);
    } else {
        snprintf(buf, len, "-");
    }
}

void dlb_param_print_help(FILE *f, const struct dlb_param_def *defs, unsigned n)
{
    static const char *const head[] = {"KEY", "TYPE", "RANGE", "DEFAULT",
                                       "UNIT"};
    size_t w[5];
    for (int c = 0; c < 5; c++)
        w[c] = strlen(head[c]);
    char range[512];
    for (unsigned k = 0; k < n; k++) {
        const struct dlb_param_def *d = &defs[k];
        range_text(d, range, sizeof range);
        const char *cell[5] = {d->name, dlb_param_type_name(d->type), range,
                               d->def && *d->def ? d->def : "\"\"",
                               d->unit ? d->unit : "-"};
        for (int c = 0; c < 5; c++)
            if (strlen(cell[c]) > w[c])
                w[c] = strlen(cell[c]);
    }
    for (int c = 0; c < 5; c++)
        fprintf(f, "%-*s  ", (int)w[c], head[c]);
    fprintf(f, "DESCRIPTION\n");
    for (unsigned k = 0; k < n; k++) {
        const struct dlb_param_def *d = &defs[k];
        range_text(d, range, sizeof range);
        const char *cell[5] = {d->name, dlb_param_type_name(d->type), range,
                               d->def && *d->def ? d->def : "\"\"",
                               d->unit ? d->unit : "-"};
        for (int c = 0; c < 5; c++)
            fprintf(f, "%-*s  ", (int)w[c], cell[c]);
        fprintf(f, "%s%s\n", d->help ? d->help : "",
                (d->flags & DLB_PARAM_NO_SWEEP) ? " (not sweepable)" : "");
    }
}
