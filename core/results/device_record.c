/* The device record of a configuration, its memory figures, and the
 * run's list of devices (device_record.h). */
#include "results/device_record.h"

#include <string.h>

#include "backend/backend.h"
#include "results/record.h"

json_t *dlb_device_record(struct dlb_backend *be)
{
    struct dlb_device_info info;
    /* A backend of interface 1.1 fills only the fields it knows. */
    memset(&info, 0, sizeof info);
    if (!be || DLB_BE_CALL(be, device_info, &info) != DLB_OK)
        return NULL;
    json_t *libs = json_object();
    for (size_t i = 0; i < sizeof info.libs / sizeof info.libs[0]; i++) {
        if (!info.libs[i].name[0])
            break;
        json_object_set_new(libs, info.libs[i].name,
                            info.libs[i].version[0]
                                ? json_string(info.libs[i].version)
                                : json_null());
    }
    json_t *d = json_pack("{s:s, s:s, s:s, s:i, s:i, s:s, s:o}",
                          "backend", dlb_backend_name(be),
                          "name", info.name,
                          "arch", info.arch,
                          "compute_units", info.compute_units,
                          "device_count", info.device_count,
                          "driver", info.driver,
                          "libraries", libs);
    if (d)
        json_object_set_new(d, "memory_total_bytes",
                            info.mem_total
                                ? json_integer((json_int_t)info.mem_total)
                                : json_null());
    return d;
}

void dlb_device_memory_figures(struct dlb_backend *be, const struct dlb_host *h)
{
    struct dlb_device_info info;
    memset(&info, 0, sizeof info);
    if (!be || DLB_BE_CALL(be, device_info, &info) != DLB_OK)
        return;
    if (info.mem_held_peak)
        h->metric(h, "device_mem_held_peak", "bytes",
                  (double)info.mem_held_peak);
    if (info.mem_used_peak)
        h->metric(h, "device_mem_used_peak", "bytes",
                  (double)info.mem_used_peak);
}

void dlb_context_add_devices(json_t *context, json_t *records)
{
    json_t *devices = json_array();
    struct dlb_record *recs;
    size_t n;
    if (dlb_records_read(records, NULL, &recs, &n, NULL) != DLB_OK) {
        json_decref(devices); /* never: records are checked before */
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *d = recs[i].device, *seen;
        size_t j;
        int dup = 0;
        if (!json_is_object(d))
            continue;
        json_array_foreach(devices, j, seen)
            dup |= json_equal(seen, d);
        if (!dup)
            json_array_append(devices, d);
    }
    dlb_records_free(recs, n);
    if (json_array_size(devices))
        json_object_set_new(context, "devices", devices);
    else
        json_decref(devices);
}
