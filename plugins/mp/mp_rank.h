/* What engines mpi and nccl share: one stage per rank of an MPI world.
 * Each rank runs stage r on a replica of its model; this file starts the
 * stage on the first step, copies weights set from outside into it,
 * hands every stage's layers back to rank 0's model after the update,
 * keeps the figures and gathers them on rank 0. How activations travel
 * between the stages is the engine's (mp_mpi.c, mp_nccl.c). */
#ifndef DLB_MP_RANK_H
#define DLB_MP_RANK_H

#include "mp.h"
#include "mpi_world.h"

struct mp_rank {
    const struct dlb_host *h;
    const struct dlb_model_api *api;
    struct mp_settings s;
    struct dlb_mpi_world w;
    int S, M, r;
    int started;
    dlb_status start_status;
    struct mp_cut cut;
    struct dlb_model *model, *replica;
    struct dlb_stage *stage;
    struct mp_op *ops;             /* this stage's schedule: 2 M */
    uint32_t *lo;                  /* micro-batch k: images [lo[k], lo[k+1]) */
    size_t per_image;              /* input values of one image */
    float *handback, *state;       /* rank 0's handback: the largest stage */
    size_t handback_n, handback_max, state_n;
    int handback_tag;              /* rank r's hand-back is tagged tag + r */
    uint64_t version;
    struct mp_figures fig;
};

/* An engine's part of a step: its start (after the stage is open) and
 * the schedule's operations with the update, which add their time to
 * *busy and the micro-batches' share of the loss to *loss. */
struct mp_rank_engine {
    dlb_status (*start)(struct mp_rank *p, struct dlb_model *m);
    dlb_status (*run)(struct mp_rank *p, struct dlb_model *m,
                      const struct dlb_batch *b, double *busy, double *loss);
};

/* Open the world and check that it has a rank per stage. */
dlb_status mp_rank_open(const struct dlb_host *h, const struct mp_settings *s,
                        int handback_tag, struct mp_rank *p);

/* A training step: start on the first one, then the engine's run between
 * the weights' copy and the hand-back. A failure ends every rank. */
dlb_status mp_rank_step(struct mp_rank *p, const struct mp_rank_engine *eng,
                        struct dlb_model *m, const struct dlb_batch *b);

/* Rank 0 gathers the stages' times and memory; called on every rank. */
dlb_status mp_rank_figures(struct mp_rank *p, struct mp_figures *out);

/* Close the stage and the world, after the engine's own parts. */
void mp_rank_close(struct mp_rank *p);

#endif
