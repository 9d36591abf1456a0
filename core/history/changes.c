/* Change points of every series and their sizes (changes.h). */
#include "history/changes.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "compare/compare.h"

/* Characters of a pattern that are not wildcards: how specific it is. */
static size_t literal_chars(const char *p)
{
    size_t n = 0;
    for (; *p; p++)
        n += *p != '*' && *p != '?' && *p != '[' && *p != ']';
    return n;
}

double dlb_threshold_for(const struct dlb_threshold_rule *rules, size_t n,
                         const char *suite, const char *config,
                         const char *machine, long *rule)
{
    long best = -1;
    size_t best_spec = 0;
    for (size_t i = 0; i < n; i++) {
        const struct dlb_threshold_rule *r = &rules[i];
        if (fnmatch(r->suite, suite, 0) || fnmatch(r->config, config, 0) ||
            fnmatch(r->machine, machine, 0))
            continue;
        size_t spec = literal_chars(r->suite) + literal_chars(r->config) +
                      literal_chars(r->machine);
        /* Rules come oldest first: >= lets the newer of two equals win. */
        if (best < 0 || spec >= best_spec) {
            best = (long)i;
            best_spec = spec;
        }
    }
    if (rule)
        *rule = best;
    return best >= 0 ? rules[best].slowdown : DLB_CHANGES_THRESHOLD;
}

/* FNV-1a over the series' name: its own stream of permutations. */
static uint64_t series_seed(uint64_t seed, const struct dlb_series *s)
{
    uint64_t h = 1469598103934665603ull;
    const char *parts[3] = {s->suite, s->config, s->machine};
    for (int k = 0; k < 3; k++) {
        for (const char *c = parts[k]; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
        h = (h ^ 0xff) * 1099511628211ull;
    }
    return seed ^ h;
}

/* The size of the change at cp[k] within its neighbouring segments. */
static void size_change(const struct dlb_series *s, struct dlb_change *c)
{
    size_t nb = c->at - c->seg_lo, na = c->seg_hi - c->at;
    double *b = malloc(nb * sizeof *b), *a = malloc(na * sizeof *a);
    struct dlb_ratio r = {NAN, NAN, NAN, NAN};
    if (a && b) {
        for (size_t i = 0; i < nb; i++)
            b[i] = s->pts[c->seg_lo + i].median_s;
        for (size_t i = 0; i < na; i++)
            a[i] = s->pts[c->at + i].median_s;
        if (dlb_ratio_estimate(b, nb, a, na, &r) != DLB_OK)
            r = (struct dlb_ratio){NAN, NAN, NAN, NAN};
    }
    free(a);
    free(b);
    c->ratio = r.ratio;
    c->lo = r.lo;
    c->hi = r.hi;
    double t = c->threshold;
    c->beyond = c->ratio > 1 + t ? 1 : c->ratio < 1 / (1 + t) ? -1 : 0;
}

dlb_status dlb_changes_find(const struct dlb_series_set *set, const struct dlb_cp_opts *o,
                            const struct dlb_threshold_rule *rules, size_t n_rules,
                            struct dlb_change **out, size_t *n_out,
                            struct dlb_error *err)
{
    *out = NULL;
    *n_out = 0;
    struct dlb_change *all = NULL;
    size_t n_all = 0;
    dlb_status s = DLB_OK;
    for (size_t i = 0; i < set->n && s == DLB_OK; i++) {
        const struct dlb_series *sr = &set->v[i];
        double *x = malloc((sr->n + 1) * sizeof *x);
        if (!x) {
            s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
            break;
        }
        for (size_t k = 0; k < sr->n; k++)
            x[k] = log(sr->pts[k].median_s);
        struct dlb_cp_opts so = *o;
        so.seed = series_seed(o->seed, sr);
        struct dlb_cp *cps = NULL;
        size_t n_cps = 0;
        s = dlb_edivisive(x, sr->n, &so, &cps, &n_cps, err);
        free(x);
        struct dlb_change *grown = s == DLB_OK && n_cps
            ? realloc(all, (n_all + n_cps) * sizeof *grown) : all;
        if (s == DLB_OK && n_cps && !grown)
            s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
        if (s == DLB_OK) {
            all = grown;
            double t = dlb_threshold_for(rules, n_rules, sr->suite, sr->config,
                                         sr->machine, NULL);
            for (size_t k = 0; k < n_cps; k++) {
                struct dlb_change *c = &all[n_all++];
                *c = (struct dlb_change){
                    .series = i, .at = cps[k].at, .p = cps[k].p, .threshold = t,
                    .seg_lo = k ? cps[k - 1].at : 0,
                    .seg_hi = k + 1 < n_cps ? cps[k + 1].at : sr->n,
                };
                size_change(sr, c);
            }
        }
        free(cps);
    }
    if (s != DLB_OK) {
        free(all);
        return s;
    }
    *out = all;
    *n_out = n_all;
    return DLB_OK;
}
