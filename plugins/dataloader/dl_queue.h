/* The dataloader's engine: worker threads fill batches ahead of the
 * consumer into a ring of batch buffers (a bounded queue), and the consumer
 * takes them strictly in batch order.
 *
 * Batch k of the run is always the same batch: its epoch is k / B and its
 * number within the epoch k % B (B batches per epoch), its images are that
 * slice of the epoch's order, and its augmentation draws come from the
 * host's batch_fill for (seed, epoch, number). Which worker fills it, and
 * when, changes nothing, so any number of workers gives the baseline's
 * batches. Only the host's data services touch the data: this file is
 * compiled into the plugin and, unchanged, into its unit test. */
#ifndef DLB_PLUGIN_DL_QUEUE_H
#define DLB_PLUGIN_DL_QUEUE_H

#include <sched.h>
#include <stdint.h>

#include <dlbench/plugin.h>

/* Queue-depth histogram: depths 0 .. DL_DEPTH_BINS-2, then "or more". */
#define DL_DEPTH_BINS 9

struct dl_config {
    unsigned workers;   /* 0: fill in dl_queue_next, on the caller's thread */
    unsigned prefetch;  /* batches ahead per worker (>= 1) */
    uint32_t batch;
    int shuffle, augment, drop_last;
    uint64_t seed;
    /* CPUs the workers run on; used when has_cpus. Threads inherit the
     * creator's mask, which the cpu backend may have narrowed to one core. */
    cpu_set_t cpus;
    int has_cpus;
    /* Added to the workers' nice value (0 = as the process): a lower
     * priority keeps a worker woken by next() from preempting the step's
     * own threads, which are pinned and cannot move away. */
    int nice;
    /* 1: batch buffers from the host's page-locked memory (pinned_alloc,
     * plugin ABI 1.4), which the core uploads on a copy stream. */
    int pinned;
};

/* What the consumer saw, for the plugin's figures. */
struct dl_stats {
    uint64_t batches, images;
    double stall_s;        /* time blocked in next(), all calls */
    double first_stall_s;  /* of the first call: the pipeline's start-up */
    double last_stall_s;   /* of the latest call */
    double second_t, last_t; /* entry times of the second and latest call */
    uint64_t depth_hist[DL_DEPTH_BINS]; /* ready batches found at next() */
    uint64_t depth_sum;
};

struct dl_queue;

/* Start delivering batches of `ds` (workers start at once). The queue keeps
 * pointers to h and ds, which must outlive it. DLB_ERR_INPUT when a batch
 * does not fit the data (batch 0, or above n with drop_last), DLB_ERR_NOMEM,
 * DLB_ERR_RUNTIME when a thread cannot be started. */
dlb_status dl_queue_open(const struct dlb_host *h, const struct dlb_dataset *ds,
                         const struct dl_config *cfg, struct dl_queue **out);

/* The next batch, in order; its buffers stay valid until the next call or
 * close. A worker's failure is returned here, at the batch it failed on. */
dlb_status dl_queue_next(struct dl_queue *q, struct dlb_batch *out);

/* Stop the workers (a batch being filled is finished first), join them and
 * free everything. Safe at any point, mid-epoch included; NULL is a no-op. */
void dl_queue_close(struct dl_queue *q);

/* Capacity: batches the workers may fill ahead of the consumer. */
unsigned dl_queue_capacity(const struct dl_queue *q);

/* The consumer's statistics so far (read on the consumer's thread). */
const struct dl_stats *dl_queue_stats(const struct dl_queue *q);

/* Batches per epoch for n images (0 when none fits). */
uint64_t dl_batches_per_epoch(uint32_t n, uint32_t batch, int drop_last);

#endif
