/* mp: pipeline model parallelism, a step executor with three engines
 * (mp.h).
 *
 * The network is cut into stages (`stages`, or the layers named in
 * `cuts`; without cuts, the split that balances the stages' forward cost),
 * the batch into `micro_batches` micro-batches that flow through the
 * stages under a GPipe (fill, then drain) or 1F1B schedule, and the
 * weights are updated once per batch from the gradients summed over the
 * micro-batches: single-worker training's step to fp32 rounding, with
 * batch normalisation per micro-batch as GPipe does (model_api.h).
 *
 * Engines mpi and nccl run one stage per process (`ranks`): the plugin has
 * the DLB_PLUGIN_MULTI_PROCESS capability and a "ranks" parameter, from
 * which dlbench starts the configuration through its launcher (mpirun or
 * srun); rank 0 writes the record. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor.h"
#include "mp.h"

static const char *const mp_engines[] = {"threads", "mpi", "nccl", NULL};
static const char *const mp_schedules[] = {"gpipe", "1f1b", NULL};

static const struct dlb_param_def mp_params[MP_N_PARAMS] = {
    [MP_ENGINE] = {
        .name = "engine", .type = DLB_PARAM_ENUM, .def = "threads",
        .choices = mp_engines,
        .help = "threads: one process, a stage per thread; mpi: one process "
                "per stage, activations sent with MPI; nccl: one GPU per "
                "stage, ncclSend/ncclRecv (backend cuda)",
    },
    [MP_STAGES] = {
        .name = "stages", .type = DLB_PARAM_INT, .def = "2",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 1,
        .max = MP_MAX_STAGES, .unit = "stages",
        .help = "engine threads: pipeline stages, a thread each (mpi and "
                "nccl run a stage per rank and ignore it)",
    },
    [MP_RANKS] = {
        .name = "ranks", .type = DLB_PARAM_INT, .def = "1",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 1,
        .max = MP_MAX_STAGES, .unit = "ranks",
        .help = "engines mpi and nccl: processes, one stage each, started "
                "through the suite's launcher (mpirun -np RANKS by default) "
                "(threads: 1)",
    },
    [MP_CUTS] = {
        .name = "cuts", .type = DLB_PARAM_STRING, .def = "",
        .help = "the layers that begin stages 2, 3, ... by name, e.g. "
                "\"conv2,fc1\" for three stages; empty: the split that "
                "balances the stages' forward cost",
    },
    [MP_MICRO] = {
        .name = "micro_batches", .type = DLB_PARAM_INT, .def = "4",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 1, .max = 4096,
        .unit = "micro-batches",
        .help = "micro-batches per batch, sizes differing by at most one "
                "image; at most the batch",
    },
    [MP_SCHEDULE] = {
        .name = "schedule", .type = DLB_PARAM_ENUM, .def = "1f1b",
        .choices = mp_schedules,
        .help = "gpipe: every forward, then every backward; 1f1b: fill, then "
                "one forward and one backward in turn (fewer micro-batches "
                "kept for backward)",
    },
    [MP_STAGE_THREADS] = {
        .name = "stage_threads", .type = DLB_PARAM_INT, .def = "1",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 1, .max = 4096,
        .unit = "threads",
        .help = "backend threads of each stage (a stage per core with 1)",
    },
};

static void read_settings(const struct dlb_params *p, void *settings)
{
    struct mp_settings *s = settings;
    memset(s, 0, sizeof *s);
    s->engine = (enum mp_engine_kind)p->values[MP_ENGINE].i;
    s->stages = (int)p->values[MP_STAGES].i;
    s->ranks = (int)p->values[MP_RANKS].i;
    snprintf(s->cuts, sizeof s->cuts, "%s",
             p->values[MP_CUTS].s ? p->values[MP_CUTS].s : "");
    s->micro = (int)p->values[MP_MICRO].i;
    s->schedule = (enum mp_schedule)p->values[MP_SCHEDULE].i;
    s->stage_threads = (int)p->values[MP_STAGE_THREADS].i;
}

static const struct mp_engine *engine_of(enum mp_engine_kind k)
{
    return k == MP_MPI ? &mp_engine_mpi
                       : k == MP_NCCL ? &mp_engine_nccl : &mp_engine_threads;
}

/* At suite load: the settings against the model's layers and the batch. */
static dlb_status mp_check(const struct dlb_params *p,
                           const struct dlb_config_view *cv, int *param,
                           char *reason, size_t len)
{
    struct mp_settings s;
    if (!p || p->count < MP_N_PARAMS || !cv)
        return DLB_ERR_INTERNAL;
    read_settings(p, &s);
    if (s.engine == MP_THREADS && s.ranks > 1) {
        *param = MP_RANKS;
        snprintf(reason, len, "engine threads runs in one process: ranks = %d "
                 "is for engines mpi and nccl; set stages instead", s.ranks);
        return DLB_ERR_INPUT;
    }
    if ((uint32_t)s.micro > cv->batch) {
        *param = MP_MICRO;
        snprintf(reason, len, "micro_batches = %d for a batch of %u: each "
                 "micro-batch needs at least one image", s.micro, cv->batch);
        return DLB_ERR_INPUT;
    }
    /* Cores before the field pass no readers: the stage refuses a cut
     * inside a block when it opens instead. */
    const uint32_t *reader =
        cv->struct_size >= offsetof(struct dlb_config_view, cut_reader) +
                               sizeof cv->cut_reader
            ? cv->cut_reader : NULL;
    return mp_cut_check(&s, cv->n_layers, cv->layer_names, reader, param,
                        reason, len);
}

static dlb_status mp_probe(const struct dlb_host *h,
                           const struct dlb_params *p,
                           char *reason, size_t len)
{
    struct mp_settings s;
    if (!p || p->count < MP_N_PARAMS)
        return DLB_ERR_INTERNAL;
    read_settings(p, &s);
    if (!h->model_api->extra(h, "model.copy_rng") ||
        !h->model_api->extra(h, "world.join")) {
        snprintf(reason, len, "this dlbench core has no pipeline stage "
                 "services (the extras model.copy_rng and world.join)");
        return DLB_ERR_UNSUPPORTED;
    }
    return engine_of(s.engine)->probe(h, &s, reason, len);
}

static dlb_status start_engine(const struct dlb_host *h, const void *settings,
                               struct dlb_exec_engine *e)
{
    const struct mp_settings *s = settings;
    const struct mp_engine *eng = engine_of(s->engine);
    e->step = eng->step;
    e->fini = eng->fini;
    return eng->init(h, s, &e->state);
}

static const struct dlb_exec_ops mp_exec = {
    .n_params = MP_N_PARAMS,
    .settings_size = sizeof(struct mp_settings),
    .read = read_settings,
    .start = start_engine,
};

static dlb_status mp_init(const struct dlb_host *h, const struct dlb_params *p,
                          void **state)
{
    return dlb_exec_init(&mp_exec, h, p, state);
}

static dlb_status mp_metrics(void *state, const struct dlb_host *h)
{
    struct dlb_exec *x = state;
    const struct mp_settings *ms = x->settings;
    struct mp_figures f;
    memset(&f, 0, sizeof f);
    dlb_status s = engine_of(ms->engine)->figures(x->engine.state, &f);
    if (x->global_batch && f.micro > 0) {
        h->metric(h, "global_batch", "images", x->global_batch);
        h->metric(h, "micro_batch", "images",
                  (double)x->global_batch / f.micro);
    }
    dlb_status r = mp_figures_report(h, ms, &f);
    return s != DLB_OK ? s : r;
}

static const struct dlb_executor_hooks mp_executor = {
    .train_step = dlb_exec_train_step,
};

static const struct dlb_plugin mp_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "mp",
    .version = "1.0",
    .summary = "pipeline model parallelism: stages on threads, MPI ranks or "
               "NCCL GPUs, micro-batches under GPipe or 1F1B",
    .caps = DLB_PLUGIN_MULTI_PROCESS,
    .params = mp_params,
    .n_params = MP_N_PARAMS,
    .probe = mp_probe,
    .init = mp_init,
    .fini = dlb_exec_fini,
    .executor = &mp_executor,
    .metrics = mp_metrics,
    .check = mp_check,
};

DLB_PLUGIN_DEFINE(mp_plugin)
