/* The device a configuration ran on, for its record and the run's
 * environment: what the backend's device_info says, as JSON, and its
 * memory figures. */
#ifndef DLB_CORE_DEVICE_RECORD_H
#define DLB_CORE_DEVICE_RECORD_H

#include <jansson.h>
#include <dlbench/backend.h>
#include <dlbench/plugin.h>

/* The backend's device as an object (doc/results-schema.md, "device"):
 * backend, name, arch, compute_units, device_count, memory_total_bytes,
 * driver and libraries. Facts that do not change during a run only, so
 * that the records of one device compare equal. NULL when the backend
 * gives no record. */
json_t *dlb_device_record(struct dlb_backend *be);

/* Device memory figures through h->metric: device_mem_held_peak (what the
 * backend took from the device's allocator at most) and
 * device_mem_used_peak (the device's own count at its highest seen), where
 * the backend knows them (GPU backends). */
void dlb_device_memory_figures(struct dlb_backend *be, const struct dlb_host *h);

/* The distinct "device" objects of `records`, in order of first
 * appearance, as the context's "devices" array (replacing any); nothing
 * when no record has one. The parent never opens a GPU itself (DESIGN:
 * only a configuration's process initialises CUDA), so the environment
 * learns the devices from the configurations that ran on them. */
void dlb_context_add_devices(json_t *context, json_t *records);

#endif
