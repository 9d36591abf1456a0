/* The runs a round adds after its passes: the doubtful ones again
 * (remeasure_doubtful, results/remeasure.h), then each configuration's
 * training from the later seeds (accuracy_seeds, results/seeds.h). Both
 * come after every configuration's own run, so that what disturbed a
 * measurement has had time to pass and the speed figures of the round are
 * all taken before its accuracy work. */
#include <stdio.h>

#include "proc/interrupt.h"
#include "results/remeasure.h"
#include "results/seeds.h"
#include "run/run_launch.h"
#include "search/search_loop_impl.h"
#include "stats/measure.h"

/* Whether nothing more may start: the journal failed, a signal came or
 * --time-limit passed. */
static int stop_starting(const struct dlb_search_more *m)
{
    const struct dlb_search_loop *r = m->r;
    return r->journal_failed || dlb_interrupted() ||
           (r->opts->time_limit_s > 0 && dlb_now() - m->start >= r->opts->time_limit_s);
}

size_t dlb_search_remeasure(const struct dlb_search_more *m)
{
    struct dlb_search_loop *r = m->r;
    const struct dlb_search_round *rd = m->rd;
    int extra = (int)dlb_config_core(r->plan, &r->plan->configs[0],
                                     "remeasure_doubtful")->i;
    size_t not_run = 0;
    for (int pass = 0; pass < extra && !not_run; pass++)
        for (int rep = 0; rep < m->reps; rep++)
            for (size_t o = 0; o < rd->n; o++) {
                size_t pos = rd->pos[m->order[o]];
                const struct dlb_config *c = &r->plan->configs[pos];
                int key_rep = m->reps > 1 ? rep : -1;
                if (!dlb_run_in_shard(r->opts, pos) ||
                    !dlb_remeasure_due(r->records, (long long)c->index, rd->round,
                                       key_rep, extra))
                    continue;
                if (stop_starting(m)) {
                    not_run++;
                    continue;
                }
                long long attempt = dlb_remeasure_next_attempt(
                    r->records, (long long)c->index, rd->round, key_rep);
                fprintf(stderr, "dlbench: %s was measured doubtful: measuring it "
                        "again (attempt %lld of up to %d; remeasure_doubtful)\n",
                        c->id, attempt + 1, extra + 1);
                m->prog->total++;
                struct dlb_run_kind kind = {rep, m->reps, o, attempt, 0};
                if (!dlb_search_run_one(r, rd, c, &kind, m->prog, ++*m->k,
                                        m->failures, m->err))
                    not_run++;
            }
    return not_run;
}

size_t dlb_search_seeds(const struct dlb_search_more *m)
{
    struct dlb_search_loop *r = m->r;
    const struct dlb_search_round *rd = m->rd;
    int seeds = (int)dlb_config_core(r->plan, &r->plan->configs[0],
                                     "accuracy_seeds")->i;
    size_t not_run = 0;
    /* a speed-only screening round scores no accuracy to repeat */
    if (seeds < 2 || rd->measure_only)
        return 0;
    for (int k = 1; k < seeds; k++)
        for (size_t o = 0; o < rd->n; o++) {
            size_t pos = rd->pos[m->order[o]];
            const struct dlb_config *c = &r->plan->configs[pos];
            if (!dlb_run_in_shard(r->opts, pos) ||
                !dlb_seeds_due(r->records, (long long)c->index, rd->round, k))
                continue;
            if (stop_starting(m)) {
                not_run++;
                continue;
            }
            m->prog->total++;
            struct dlb_run_kind kind = {0, 1, o, 0, k};
            if (!dlb_search_run_one(r, rd, c, &kind, m->prog, ++*m->k, m->failures,
                                    m->err))
                not_run++;
        }
    return not_run;
}
