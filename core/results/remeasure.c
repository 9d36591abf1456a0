#include "results/remeasure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/record.h"
#include "results/repeat.h"
#include "results/seeds.h"

long long dlb_attempt_of(json_t *rec)
{
    json_t *v = json_object_get(rec, "attempt");
    return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

/* Seed runs (seeds.h) are not measurements: never a key's. */
static int same_key(json_t *a, long long index, long long round, int rep)
{
    return dlb_rec_index_of(a) == index && dlb_round_of(a) == round &&
           dlb_rep_of(a) == rep && !dlb_seed_rep_of(a);
}

static const char *doubtful_of(json_t *rec)
{
    return json_string_value(json_object_get(json_object_get(rec, "system"),
                                             "doubtful"));
}

int dlb_remeasure_due(json_t *records, long long index, long long round,
                      int rep, int extra)
{
    size_t i, n = 0;
    json_t *v;
    json_array_foreach(records, i, v) {
        if (!same_key(v, index, round, rep))
            continue;
        if (dlb_rec_status_of(v) != DLB_REC_OK || !doubtful_of(v))
            return 0;
        n++;
    }
    return n > 0 && n < (size_t)extra + 1;
}

long long dlb_remeasure_next_attempt(json_t *records, long long index,
                                     long long round, int rep)
{
    size_t i;
    long long n = 0;
    json_t *v;
    json_array_foreach(records, i, v)
        n += same_key(v, index, round, rep);
    return n;
}

/* How much a doubtful run was disturbed: preemptions a second, and the
 * stolen share weighted so that 1% of stolen time counts as 100
 * preemptions a second (the two thresholds of sysmeter.h). */
static double disturbance(json_t *rec)
{
    json_t *s = json_object_get(rec, "system");
    double inv = json_number_value(json_object_get(s, "involuntary_per_s"));
    double steal = json_number_value(json_object_get(s, "steal_share"));
    return (isfinite(inv) ? inv : 0) + 1e4 * (isfinite(steal) ? steal : 0);
}

/* Which of a key's records `group[0..n)` stands for it: the first ok one
 * that is not doubtful, else the ok one disturbed least, else the last. */
static size_t pick(json_t *const *group, size_t n)
{
    size_t best = n;
    for (size_t i = 0; i < n; i++) {
        if (dlb_rec_status_of(group[i]) != DLB_REC_OK)
            continue;
        if (!doubtful_of(group[i]))
            return i;
        if (best == n || disturbance(group[i]) < disturbance(group[best]))
            best = i;
    }
    return best < n ? best : n - 1;
}

static json_t *with_history(json_t *const *group, size_t n, size_t kept)
{
    json_t *out = json_deep_copy(group[kept]);
    json_t *dbt = json_array();
    for (size_t i = 0; out && dbt && i < n; i++) {
        const char *why = doubtful_of(group[i]);
        if (why)
            json_array_append_new(dbt, json_pack("{s:I,s:s}", "attempt",
                                                 (json_int_t)dlb_attempt_of(group[i]),
                                                 "why", why));
    }
    json_t *h = out && dbt ? json_pack("{s:I,s:I,s:o}", "runs", (json_int_t)n,
                                       "kept_attempt",
                                       (json_int_t)dlb_attempt_of(group[kept]),
                                       "doubtful", dbt)
                           : NULL;
    if (!h) {
        json_decref(out);
        return NULL;
    }
    json_object_set_new(out, "remeasured", h);
    return out;
}

json_t *dlb_remeasure_pick(json_t *records)
{
    size_t n = json_array_size(records), i, j;
    json_t *out = json_array();
    json_t **group = malloc((n ? n : 1) * sizeof *group);
    unsigned char *done = calloc(n ? n : 1, 1);
    if (!out || !group || !done)
        goto fail;
    for (i = 0; i < n; i++) {
        if (done[i])
            continue;
        json_t *a = json_array_get(records, i);
        if (dlb_seed_rep_of(a)) { /* passed on for dlb_seeds_fold */
            if (json_array_append(out, a) != 0)
                goto fail;
            continue;
        }
        long long index = dlb_rec_index_of(a), round = dlb_round_of(a);
        int rep = dlb_rep_of(a);
        size_t k = 0;
        for (j = i; j < n; j++)
            if (!done[j] && same_key(json_array_get(records, j), index, round, rep)) {
                group[k++] = json_array_get(records, j);
                done[j] = 1;
            }
        json_t *kept = k == 1 ? json_incref(a) : with_history(group, k, pick(group, k));
        if (!kept || json_array_append_new(out, kept) != 0)
            goto fail;
    }
    free(group);
    free(done);
    return out;
fail:
    free(group);
    free(done);
    json_decref(out);
    return NULL;
}
