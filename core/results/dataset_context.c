/* dlb_context_add_datasets and the one-line form of a record's data. */
#include "results/dataset_context.h"

#include <stdio.h>

#include "results/record.h"

void dlb_context_add_datasets(json_t *context, json_t *records)
{
    json_t *sets = json_array();
    struct dlb_record *recs;
    size_t n;
    if (!sets || dlb_records_read(records, NULL, &recs, &n, NULL) != DLB_OK) {
        json_decref(sets); /* never: records are checked before */
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *d = recs[i].dataset, *seen;
        size_t j;
        int dup = 0;
        if (!json_is_object(d))
            continue;
        json_array_foreach(sets, j, seen)
            dup |= json_equal(seen, d);
        if (!dup)
            json_array_append(sets, d);
    }
    dlb_records_free(recs, n);
    if (json_array_size(sets))
        json_object_set_new(context, "datasets", sets);
    else
        json_decref(sets);
}

static long long count(json_t *d, const char *key)
{
    json_t *v = json_object_get(d, key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

void dlb_dataset_line(char *buf, size_t len, json_t *dataset)
{
    const char *desc = json_string_value(json_object_get(dataset, "description"));
    long long tr = count(dataset, "train_images"), te = count(dataset, "test_images");
    int off = snprintf(buf, len, "%s", desc ? desc : "unknown data");
    if (off < 0 || (size_t)off >= len)
        return;
    int more = 0;
    if (tr >= 0 && te >= 0)
        more = snprintf(buf + off, len - (size_t)off, ", %lld training and "
                        "%lld test images", tr, te);
    else if (tr >= 0 || te >= 0)
        more = snprintf(buf + off, len - (size_t)off, ", %lld %s images",
                        tr >= 0 ? tr : te, tr >= 0 ? "training" : "test");
    if (more < 0 || (size_t)(off += more) >= len)
        return;
    long long bad = count(dataset, "corrupt_images");
    if (bad > 0)
        snprintf(buf + off, len - (size_t)off, " (%lld corrupt, skipped: their "
                 "paths are in the configuration's log)", bad);
}
