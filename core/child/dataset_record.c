/* The record's "dataset" member (dataset_record.h). */
#include "child/dataset_record.h"

void dlb_dataset_record(json_t **member, const struct dlb_dataset *d, int train,
                        const char *why)
{
    json_t *o = *member;
    if (!o && !(o = *member = json_object()))
        return;
    json_object_set_new(o, "description", json_string(d->description));
    json_object_set_new(o, "kind", json_string(d->folder ? "folder"
                                               : d->synthetic ? "synthetic"
                                               : "fashion-mnist"));
    if (d->folder)
        json_object_set_new(o, "source", json_string(d->source));
    json_object_set_new(o, "synthetic", json_boolean(d->synthetic));
    json_object_set_new(o, "shape", json_pack("[I,I,I]", (json_int_t)d->c,
                                              (json_int_t)d->h, (json_int_t)d->w));
    if (d->padded_from_h)
        json_object_set_new(o, "padded_from",
                            json_pack("[I,I]", (json_int_t)d->padded_from_h,
                                      (json_int_t)d->padded_from_w));
    json_object_set_new(o, train ? "train_images" : "test_images",
                        json_integer((json_int_t)d->n));
    if (why && *why)
        json_object_set_new(o, "synthetic_because", json_string(why));
}
