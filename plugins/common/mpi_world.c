/* The MPI world of engines that run a process per rank (mpi_world.h). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_* */
#include "mpi_world.h"

#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rank 0's value on every rank: the core's measurement loop decides
 * through it, so every rank runs the same steps. */
static int64_t agree(void *ctx, int64_t value)
{
    struct dlb_mpi_world *w = ctx;
    int64_t v = value;
    MPI_Bcast(&v, 1, MPI_INT64_T, 0, w->comm);
    return v;
}

/* dlbench opens plugins with RTLD_LOCAL; Open MPI's own components are
 * shared objects that expect libmpi's symbols to be global. */
static void promote_libmpi(void)
{
    static const char *const names[] = {"libmpi.so.40", "libmpi.so", NULL};
    for (const char *const *n = names; *n; n++)
        if (dlopen(*n, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD))
            return;
}

/* A launcher that binds (mpirun for a few ranks, srun) gives each rank its
 * own CPUs; one that does not gives every rank the whole node, where each
 * backend would pin its threads to the same first CPUs. Then take this
 * rank's share of them. */
static void share_cpus(const struct dlb_host *h, struct dlb_mpi_world *w)
{
    MPI_Comm node;
    cpu_set_t mine, *all = NULL;
    int same = 1, n = 0, ids[CPU_SETSIZE];
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        CPU_ZERO(&mine);
    MPI_Comm_split_type(w->comm, MPI_COMM_TYPE_SHARED, w->rank, MPI_INFO_NULL,
                        &node);
    MPI_Comm_rank(node, &w->local_rank);
    MPI_Comm_size(node, &w->local_size);
    all = malloc((size_t)w->local_size * sizeof *all);
    if (all) {
        MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine,
                      MPI_BYTE, node);
        for (int r = 1; r < w->local_size; r++)
            same &= CPU_EQUAL(&all[0], &all[r]);
    }
    MPI_Comm_free(&node);
    free(all);
    if (!all || !same || w->local_size < 2)
        return;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mine))
            ids[n++] = c;
    if (n == 0)
        return;
    cpu_set_t share;
    CPU_ZERO(&share);
    int per = n / w->local_size > 0 ? n / w->local_size : 1;
    for (int k = 0; k < per; k++)
        CPU_SET(ids[((long)w->local_rank * per + k) % n], &share);
    sched_setaffinity(0, sizeof share, &share);
    h->log(h, DLB_LOG_DEBUG, "rank %d: the launcher did not bind ranks; this "
           "one takes %d of the node's %d CPUs", w->rank, per, n);
}

dlb_status dlb_mpi_world_open(const struct dlb_host *h,
                              struct dlb_mpi_world *w)
{
    int started = 0, provided = 0, len = 0;
    memset(w, 0, sizeof *w);
    w->comm = MPI_COMM_NULL;
    MPI_Initialized(&started);
    if (!started) {
        promote_libmpi();
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) !=
            MPI_SUCCESS) {
            h->log(h, DLB_LOG_ERROR, "MPI_Init_thread failed");
            return DLB_ERR_RUNTIME;
        }
        w->inited_here = 1;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &w->comm);
    MPI_Comm_rank(w->comm, &w->rank);
    MPI_Comm_size(w->comm, &w->size);
    w->hosts = calloc((size_t)w->size, sizeof *w->hosts);
    w->host_list = calloc((size_t)w->size, sizeof *w->host_list);
    if (!w->hosts || !w->host_list) {
        dlb_mpi_world_close(w);
        return DLB_ERR_NOMEM;
    }
    char me[MPI_MAX_PROCESSOR_NAME] = "";
    MPI_Get_processor_name(me, &len);
    MPI_Allgather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, w->hosts,
                  MPI_MAX_PROCESSOR_NAME, MPI_CHAR, w->comm);
    for (int r = 0; r < w->size; r++) {
        w->hosts[r][MPI_MAX_PROCESSOR_NAME - 1] = '\0';
        w->host_list[r] = w->hosts[r];
    }
    w->same_host = 1;
    for (int r = 1; r < w->size; r++)
        w->same_host &= strcmp(w->hosts[r], w->hosts[0]) == 0;
    share_cpus(h, w);
    struct dlb_world world = {w->rank, w->size, w->host_list, agree, w};
    dlb_extra_world_join join =
        (dlb_extra_world_join)h->model_api->extra(h, "world.join");
    dlb_status s = join ? join(h, &world) : DLB_ERR_UNSUPPORTED;
    if (s != DLB_OK)
        dlb_mpi_world_close(w);
    return s;
}

void dlb_mpi_world_close(struct dlb_mpi_world *w)
{
    if (w->comm != MPI_COMM_NULL)
        MPI_Comm_free(&w->comm);
    w->comm = MPI_COMM_NULL;
    if (w->inited_here)
        MPI_Finalize();
    w->inited_here = 0;
    free(w->hosts);
    free(w->host_list);
    w->hosts = NULL;
    w->host_list = NULL;
}

void dlb_mpi_world_abort(const struct dlb_host *h,
                         const struct dlb_mpi_world *w, const char *why)
{
    h->log(h, DLB_LOG_ERROR,
           "rank %d of %d (host %s): %s; stopping every rank",
           w->rank, w->size, w->hosts ? w->hosts[w->rank] : "?", why);
    fflush(stderr);
    MPI_Abort(w->comm, 1);
}
