/* The MPI world of engines that run a process per rank (dp's and mp's
 * mpi and nccl): MPI started by the plugin (one configuration per
 * process, so MPI_Init once), the host of every rank, each rank's share
 * of its node's CPUs, the core told about the world, and a way out that
 * stops every rank at once. */
#ifndef DLB_MPI_WORLD_H
#define DLB_MPI_WORLD_H

#include <mpi.h>

#include <dlbench/model_api.h>

struct dlb_mpi_world {
    MPI_Comm comm;          /* the job's ranks; a duplicate of the world */
    int rank, size;
    int local_rank, local_size;
    int same_host;          /* every rank on this rank's host */
    char (*hosts)[MPI_MAX_PROCESSOR_NAME];
    const char **host_list;
    int inited_here;        /* MPI was started here: finalize it here */
};

/* Start MPI (unless something else did), learn the world, pin this rank
 * to its share of the node's CPUs when the launcher did not bind ranks,
 * and join_world the core. */
dlb_status dlb_mpi_world_open(const struct dlb_host *h,
                              struct dlb_mpi_world *w);
void dlb_mpi_world_close(struct dlb_mpi_world *w);

/* A rank that cannot go on: say which and why, then end every rank (the
 * others would wait for it in the next collective for ever). */
void dlb_mpi_world_abort(const struct dlb_host *h,
                         const struct dlb_mpi_world *w, const char *why);

#endif
