#include "results/seeds.h"

#include <math.h>
#include <stdlib.h>

#include "results/record.h"
#include "results/repeat.h"

int dlb_seed_rep_of(json_t *rec)
{
    json_t *v = json_object_get(rec, "seed_rep");
    return json_is_integer(v) ? (int)json_integer_value(v) : 0;
}

static json_t *metric(json_t *rec, const char *name)
{
    return json_object_get(json_object_get(json_object_get(rec, "metrics"), name),
                           "value");
}

static long long seed_of(json_t *rec)
{
    json_t *s = json_object_get(json_object_get(rec, "config"), "seed");
    return json_is_integer(s) ? (long long)json_integer_value(s) : 0;
}

/* The configuration's own run of (index, round) that seed runs attach
 * to: no seed_rep, the first repetition (rep 0, or none). */
static int is_own(json_t *rec, long long index, long long round)
{
    return dlb_rec_index_of(rec) == index && dlb_round_of(rec) == round &&
           dlb_seed_rep_of(rec) == 0 && dlb_rep_of(rec) <= 0;
}

static int folded_has(json_t *own, long long seed)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(own, "seeds"), i, v)
        if (json_integer_value(json_object_get(v, "seed")) == seed)
            return 1;
    return 0;
}

int dlb_seeds_due(json_t *records, long long index, long long round, int k)
{
    size_t i;
    json_t *v, *own = NULL;
    json_array_foreach(records, i, v) {
        if (dlb_rec_index_of(v) == index && dlb_round_of(v) == round &&
            dlb_seed_rep_of(v) == k)
            return 0;
        if (!own && is_own(v, index, round) && dlb_rec_status_of(v) == DLB_REC_OK)
            own = v;
    }
    return own && json_is_number(metric(own, "accuracy")) &&
           !folded_has(own, seed_of(own) + k);
}

/* One seed's entry: its scores, or why it has none. */
static json_t *entry(json_t *rec, long long seed)
{
    if (dlb_rec_status_of(rec) != DLB_REC_OK || !json_is_number(metric(rec, "accuracy")))
        return json_pack("{s:I,s:s,s:s}", "seed", (json_int_t)seed, "status",
                         dlb_rec_status_name((enum dlb_rec_status)dlb_rec_status_of(rec)),
                         "reason", dlb_rec_reason_of(rec) ? dlb_rec_reason_of(rec)
                                                          : "no accuracy scored");
    json_t *e = json_pack("{s:I,s:O}", "seed", (json_int_t)seed, "accuracy",
                          metric(rec, "accuracy"));
    json_t *loss = metric(rec, "test_loss"), *train = metric(rec, "train_loss_last");
    json_t *marks = json_object_get(rec, "test_correct");
    if (e && json_is_number(loss))
        json_object_set(e, "test_loss", loss);
    if (e && json_is_number(train))
        json_object_set(e, "train_loss_last", train);
    if (e && json_is_string(marks))
        json_object_set(e, "test_correct", marks);
    return e;
}

/* The mean and standard deviation of the seeds' accuracies into own's
 * metrics. */
static void summarize(json_t *own, json_t *seeds)
{
    double sum = 0, ss = 0;
    size_t n = 0, i;
    json_t *v;
    json_array_foreach(seeds, i, v)
        if (json_is_number(json_object_get(v, "accuracy"))) {
            sum += json_number_value(json_object_get(v, "accuracy"));
            n++;
        }
    if (!n)
        return;
    double mean = sum / (double)n;
    json_array_foreach(seeds, i, v)
        if (json_is_number(json_object_get(v, "accuracy"))) {
            double d = json_number_value(json_object_get(v, "accuracy")) - mean;
            ss += d * d;
        }
    json_t *m = json_object_get(own, "metrics");
    json_object_set_new(m, "accuracy", json_pack("{s:f,s:s}", "value", mean, "unit", "%"));
    if (n > 1)
        json_object_set_new(m, "accuracy_sd",
                            json_pack("{s:f,s:s}", "value", sqrt(ss / (double)(n - 1)),
                                      "unit", "points"));
}

static int by_seed_rep(const void *a, const void *b)
{
    int x = dlb_seed_rep_of(*(json_t *const *)a), y = dlb_seed_rep_of(*(json_t *const *)b);
    return (x > y) - (x < y);
}

/* A copy of `own` with its seed runs among `records` folded in, in seed
 * order whatever order they ran in; *none set when it has none. NULL
 * then, or without memory. */
static json_t *fold_one(json_t *records, json_t *own, int *none)
{
    long long index = dlb_rec_index_of(own), round = dlb_round_of(own);
    long long s0 = seed_of(own);
    size_t i, n = 0;
    json_t *v, *out = NULL, *seeds = NULL;
    json_t **runs = malloc((json_array_size(records) + 1) * sizeof *runs);
    *none = 0;
    if (!runs)
        return NULL;
    json_array_foreach(records, i, v)
        if (dlb_seed_rep_of(v) > 0 && dlb_rec_index_of(v) == index &&
            dlb_round_of(v) == round)
            runs[n++] = v;
    if (!n) {
        *none = 1;
        free(runs);
        return NULL;
    }
    qsort(runs, n, sizeof *runs, by_seed_rep);
    out = json_deep_copy(own);
    seeds = json_array();
    int ok = out && seeds && json_array_append_new(seeds, entry(own, s0)) == 0;
    for (i = 0; ok && i < n; i++)
        ok = json_array_append_new(seeds, entry(runs[i], s0 + dlb_seed_rep_of(runs[i]))) == 0;
    free(runs);
    if (!ok) {
        json_decref(out);
        json_decref(seeds);
        return NULL;
    }
    json_object_set_new(out, "seeds", seeds);
    /* the first seed's marks are its entry's now: one copy in the record */
    json_object_del(out, "test_correct");
    summarize(out, seeds);
    return out;
}

json_t *dlb_seeds_fold(json_t *records)
{
    json_t *out = json_array(), *v;
    size_t i;
    if (!out)
        return NULL;
    json_array_foreach(records, i, v) {
        if (dlb_seed_rep_of(v) > 0)
            continue;
        json_t *folded = NULL;
        int none = 1;
        if (is_own(v, dlb_rec_index_of(v), dlb_round_of(v)) &&
            dlb_rec_status_of(v) == DLB_REC_OK)
            folded = fold_one(records, v, &none);
        if ((!folded && !none) ||
            json_array_append_new(out, folded ? folded : json_incref(v)) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}
