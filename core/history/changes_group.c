/* Change points that moved together (changes.h): one group per commit
 * range, as Chromium's dashboard groups alerts whose revision ranges
 * agree. */
#include "history/changes.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct dlb_point *before(const struct dlb_series_set *set,
                                      const struct dlb_change *c)
{
    return &set->v[c->series].pts[c->at - 1];
}

static const struct dlb_point *after(const struct dlb_series_set *set,
                                     const struct dlb_change *c)
{
    return &set->v[c->series].pts[c->at];
}

/* Whether the change's range names a change of commit. */
static int commit_keyed(const struct dlb_point *g, const struct dlb_point *b)
{
    return strcmp(g->commit, b->commit) && strcmp(g->commit, "unknown") &&
           strcmp(b->commit, "unknown");
}

static int same_group(const struct dlb_series_set *set, const struct dlb_change *x,
                      const struct dlb_change *y)
{
    const struct dlb_point *gx = before(set, x), *bx = after(set, x);
    const struct dlb_point *gy = before(set, y), *by = after(set, y);
    if (commit_keyed(gx, bx) || commit_keyed(gy, by))
        return !strcmp(gx->commit, gy->commit) && !strcmp(bx->commit, by->commit);
    return !strcmp(set->v[x->series].machine, set->v[y->series].machine) &&
           !strcmp(gx->start_utc, gy->start_utc) && !strcmp(bx->start_utc, by->start_utc);
}

void dlb_change_groups_free(struct dlb_change_group *g, size_t n)
{
    for (size_t i = 0; g && i < n; i++)
        free(g[i].members);
    free(g);
}

static int newest_first(const void *a, const void *b)
{
    const struct dlb_change_group *x = a, *y = b;
    int c = strcmp(y->bad_utc, x->bad_utc);
    return c ? c : strcmp(x->good_commit, y->good_commit);
}

static double distance_from_one(double r)
{
    return isfinite(r) && r > 0 ? fabs(log(r)) : 0;
}

dlb_status dlb_changes_group(const struct dlb_series_set *set,
                             const struct dlb_change *ch, size_t n,
                             struct dlb_change_group **out, size_t *n_out,
                             struct dlb_error *err)
{
    *out = NULL;
    *n_out = 0;
    struct dlb_change_group *g = calloc(n + 1, sizeof *g);
    size_t ng = 0;
    if (!g)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < ng && !same_group(set, &ch[g[k].members[0]], &ch[i]))
            k++;
        if (k == ng) {
            const struct dlb_point *gp = before(set, &ch[i]), *bp = after(set, &ch[i]);
            g[ng] = (struct dlb_change_group){gp->commit, bp->commit, gp->start_utc,
                                              bp->start_utc, NULL, 0, 1, 0, 0, 0};
            if (!(g[ng].members = calloc(n, sizeof *g[ng].members))) {
                dlb_change_groups_free(g, ng);
                return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
            }
            ng++;
        }
        struct dlb_change_group *gr = &g[k];
        gr->members[gr->n++] = i;
        if (distance_from_one(ch[i].ratio) > distance_from_one(gr->worst_ratio))
            gr->worst_ratio = ch[i].ratio;
        gr->beyond += ch[i].beyond != 0;
        gr->slower_beyond += ch[i].beyond > 0;
        long long runs_after = (long long)(ch[i].seg_hi - ch[i].at);
        if (runs_after > gr->runs_after)
            gr->runs_after = runs_after;
    }
    qsort(g, ng, sizeof *g, newest_first);
    *out = g;
    *n_out = ng;
    return DLB_OK;
}

char *dlb_change_group_members_json(const struct dlb_series_set *set,
                                    const struct dlb_change *ch,
                                    const struct dlb_change_group *g)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < g->n; i++) {
        const struct dlb_change *c = &ch[g->members[i]];
        const struct dlb_series *s = &set->v[c->series];
        json_t *m = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I}",
            "suite", s->suite, "config", s->config, "machine", s->machine,
            "good_commit", s->pts[c->at - 1].commit, "bad_commit", s->pts[c->at].commit,
            "good_utc", s->pts[c->at - 1].start_utc, "bad_utc", s->pts[c->at].start_utc,
            "runs_before", (json_int_t)(c->at - c->seg_lo),
            "runs_after", (json_int_t)(c->seg_hi - c->at));
        if (!m)
            continue;
        /* JSON has no NaN: a figure that could not be computed is left
         * out. */
        if (isfinite(c->ratio))
            json_object_set_new(m, "ratio", json_real(c->ratio));
        if (isfinite(c->lo) && isfinite(c->hi))
            json_object_set_new(m, "ratio_ci", json_pack("[f, f]", c->lo, c->hi));
        json_object_set_new(m, "p", json_real(c->p));
        json_object_set_new(m, "threshold", json_real(c->threshold));
        json_object_set_new(m, "beyond", c->beyond > 0 ? json_string("slower")
                            : c->beyond < 0 ? json_string("faster") : json_null());
        json_array_append_new(a, m);
    }
    char *text = a ? json_dumps(a, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(a);
    return text;
}
