/* dp: data parallelism, a step executor with three engines (dp.h).
 *
 * Every engine splits the global batch (the suite's `batch`) into
 * contiguous shards without overlap, one per worker, runs forward and
 * backward of each shard, sums the gradients in buckets of bucket_size
 * (scaled so that the sum is the gradient of the global batch's mean loss,
 * unless average = sum), and applies the same SGD update on every worker.
 * Throughput is global images per second of step time; the results state
 * the global and per-worker batch and the learning rate.
 *
 * Engines mpi and nccl run as `ranks` processes: the plugin has the
 * DLB_PLUGIN_MULTI_PROCESS capability and a "ranks" parameter, from which
 * dlbench starts the configuration through its launcher (mpirun or srun);
 * rank 0 writes the record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor.h"
#include "dp.h"

static const char *const dp_engines[] = {"threads", "mpi", "nccl", NULL};
static const char *const dp_averages[] = {"mean", "sum", NULL};

static const struct dlb_param_def dp_params[DP_N_PARAMS] = {
    [DP_ENGINE] = {
        .name = "engine", .type = DLB_PARAM_ENUM, .def = "threads",
        .choices = dp_engines,
        .help = "threads: one process, a replica per thread; mpi: one process "
                "per rank, MPI all-reduce on the CPU; nccl: one GPU per rank, "
                "NCCL all-reduce (backend cuda)",
    },
    [DP_REPLICAS] = {
        .name = "replicas", .type = DLB_PARAM_INT, .def = "2",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 1, .max = 1024,
        .unit = "replicas",
        .help = "engine threads: worker threads, each with a replica of the "
                "model on its share of the batch (mpi and nccl run one "
                "replica per rank and ignore it)",
    },
    [DP_RANKS] = {
        .name = "ranks", .type = DLB_PARAM_INT, .def = "1",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 1, .max = 65536,
        .unit = "ranks",
        .help = "engines mpi and nccl: processes, started through the "
                "launcher (--launcher or DLBENCH_LAUNCHER; mpirun -np RANKS "
                "by default) (threads: 1)",
    },
    [DP_BUCKET] = {
        .name = "bucket_size", .type = DLB_PARAM_SIZE, .def = "25MiB",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 4,
        .max = 1073741824.0, .unit = "bytes",
        .help = "gradients are all-reduced in buckets of about this size, "
                "last layers first (25 MiB as common frameworks)",
    },
    [DP_OVERLAP] = {
        .name = "overlap", .type = DLB_PARAM_BOOL, .def = "on",
        .help = "start a bucket's all-reduce as soon as backward has its "
                "gradients (off: all buckets after backward)",
    },
    [DP_AVERAGE] = {
        .name = "average", .type = DLB_PARAM_ENUM, .def = "mean",
        .choices = dp_averages,
        .help = "mean: the reduced gradient is the global batch's mean-loss "
                "gradient, as one worker computes it; sum: the sum of the "
                "workers' mean-loss gradients (learning rate x workers)",
    },
    [DP_REPLICA_THREADS] = {
        .name = "replica_threads", .type = DLB_PARAM_INT, .def = "1",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 1, .max = 4096,
        .unit = "threads",
        .help = "engine threads: backend threads of each replica other than "
                "the first (which uses the suite's `threads`)",
    },
};

static void read_settings(const struct dlb_params *p, void *settings)
{
    struct dp_settings *s = settings;
    s->engine = (enum dp_engine_kind)p->values[DP_ENGINE].i;
    s->replicas = (int)p->values[DP_REPLICAS].i;
    s->ranks = (int)p->values[DP_RANKS].i;
    s->bucket_bytes = (size_t)p->values[DP_BUCKET].i;
    s->overlap = p->values[DP_OVERLAP].i != 0;
    s->average = p->values[DP_AVERAGE].i == 0;
    s->replica_threads = (int)p->values[DP_REPLICA_THREADS].i;
}

static const struct dp_engine *engine_of(enum dp_engine_kind k)
{
    return k == DP_MPI ? &dp_engine_mpi
                       : k == DP_NCCL ? &dp_engine_nccl : &dp_engine_threads;
}

static dlb_status dp_probe(const struct dlb_host *h,
                           const struct dlb_params *p,
                           char *reason, size_t len)
{
    struct dp_settings s;
    if (!p || p->count < DP_N_PARAMS)
        return DLB_ERR_INTERNAL;
    read_settings(p, &s);
    if (!h->model_api->extra(h, "model.copy_rng") ||
        !h->model_api->extra(h, "world.join")) {
        snprintf(reason, len, "this dlbench core has no replica services "
                 "(the extras model.copy_rng and world.join)");
        return DLB_ERR_UNSUPPORTED;
    }
    return engine_of(s.engine)->probe(h, &s, reason, len);
}

static dlb_status start_engine(const struct dlb_host *h, const void *settings,
                               struct dlb_exec_engine *e)
{
    const struct dp_settings *s = settings;
    const struct dp_engine *eng = engine_of(s->engine);
    e->step = eng->step;
    e->fini = eng->fini;
    return eng->init(h, s, &e->state);
}

static const struct dlb_exec_ops dp_exec = {
    .n_params = DP_N_PARAMS,
    .settings_size = sizeof(struct dp_settings),
    .read = read_settings,
    .start = start_engine,
};

static dlb_status dp_init(const struct dlb_host *h, const struct dlb_params *p,
                          void **state)
{
    return dlb_exec_init(&dp_exec, h, p, state);
}

static dlb_status dp_metrics(void *state, const struct dlb_host *h)
{
    struct dlb_exec *x = state;
    const struct dp_settings *ds = x->settings;
    struct dp_figures f;
    memset(&f, 0, sizeof f);
    dlb_status s = engine_of(ds->engine)->figures(x->engine.state, x->model,
                                                  &f);
    if (x->global_batch) {
        h->metric(h, "global_batch", "images", x->global_batch);
        h->metric(h, "local_batch", "images",
                  (double)x->global_batch / (f.workers > 0 ? f.workers : 1));
    }
    dlb_status r = dp_figures_report(h, ds, &f, x->model);
    return s != DLB_OK ? s : r;
}

static const struct dlb_executor_hooks dp_executor = {
    .train_step = dlb_exec_train_step,
};

static const struct dlb_plugin dp_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "dp",
    .version = "1.0",
    .summary = "data parallelism: replicas on threads, MPI ranks or NCCL GPUs, "
               "bucketed gradient all-reduce overlapped with backward",
    .caps = DLB_PLUGIN_MULTI_PROCESS,
    .params = dp_params,
    .n_params = DP_N_PARAMS,
    .probe = dp_probe,
    .init = dp_init,
    .fini = dlb_exec_fini,
    .executor = &dp_executor,
    .metrics = dp_metrics,
};

DLB_PLUGIN_DEFINE(dp_plugin)
