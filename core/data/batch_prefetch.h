/* Pinned batches uploaded one step ahead on the backend's copy stream
 * (backend API 1.4), as a framework's data prefetcher with a side stream
 * does: while step k computes on the device, batch k+1's copy runs.
 *
 * Two device slots take turns. Step k: the stream waits (on the device,
 * not the host) for batch k's copy; the host waits until that copy has
 * read the batch's memory, so that the batch source may refill it when
 * asked for batch k+1 (the contract of next: valid until the next call);
 * then batch k+1 is taken and its copy enqueued, after the work enqueued
 * so far (step k-1, the last reader of its slot) and before step k's, so
 * the two run side by side. The batches and their order are the batch
 * source's, unchanged. */
#ifndef DLB_CORE_MODEL_BATCH_PREFETCH_H
#define DLB_CORE_MODEL_BATCH_PREFETCH_H

#include <stdint.h>

#include <dlbench/backend.h>

#include "util/error.h"
#include "data/batches.h"

struct dlb_prefetch;

/* One batch on the device: F32 images, S32 labels, n of them. */
struct dlb_dev_batch {
    struct dlb_buffer *images, *labels;
    uint32_t n;
};

/* What the uploads cost and how much of it the steps hid. */
struct dlb_prefetch_figures {
    uint64_t batches;   /* uploads enqueued */
    uint64_t measured;  /* uploads whose copy and wait were measured */
    double bytes;       /* bytes copied, all uploads */
    double copy_s;      /* device time of the measured copies */
    double exposed_s;   /* part of it the stream waited for */
};

/* 1 when backend `be` has the API 1.4 uploads. */
int dlb_prefetch_supported(struct dlb_backend *be);

/* Slots for batches of up to `batch` images of `per_image` floats, and
 * the upload of `first` (batch k = 0) into one of them. */
dlb_status dlb_prefetch_open(struct dlb_backend *be, uint32_t batch,
                             size_t per_image, const struct dlb_batch *first,
                             struct dlb_prefetch **out, struct dlb_error *err);

/* Batch k on the device (the stream waits for it), with batch k+1 taken
 * from `src` and its upload enqueued. Call before enqueuing step k. */
dlb_status dlb_prefetch_next(struct dlb_prefetch *p, struct dlb_batches *src,
                             struct dlb_dev_batch *out, struct dlb_error *err);

/* Waits for the copies in flight; NULL is fine. Close before the batch
 * source whose memory they read. */
void dlb_prefetch_close(struct dlb_prefetch *p);

/* The figures so far; all zero for NULL. */
void dlb_prefetch_figures(const struct dlb_prefetch *p,
                          struct dlb_prefetch_figures *out);

#endif
