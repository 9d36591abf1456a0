/* distill: knowledge distillation (Hinton et al., 2015).
 *
 * The workload's model is the student; the teacher is another model file
 * (vgg-small by default) with the reference weights the harness trains
 * and caches for it. The plugin takes the training step over through the
 * executor hook: each step gets the teacher's logits for the batch and
 * trains the student on the blend of the hard labels and the teacher's
 * temperature-softened outputs (the extra distill.soft_target_step),
 *
 *   loss = (1 - alpha) NLL + alpha T^2 KL(softmax(t / T) || softmax(z / T)),
 *
 * for the suite's step budget, like the student trained alone.
 *
 * The teacher's logits come from a cache of the whole training set, built
 * once at the first step (teacher_cache = on: memory for speed), or from a
 * teacher forward pass at every step (off). The cache is keyed by image
 * content (kd_cache.h); an augmented image misses and is computed on the
 * fly, so both settings train the same student.
 *
 * The teacher is opened at the first training step, the first moment the
 * workload lends its backend and data: the cache is filled then and the
 * figures of both models are taken. Its reference weights, where the
 * cache has none (minutes for vgg-small, once per machine), were trained
 * before the workload opened its backend (init's prepare). That step
 * falls in the harness' warm-up; its time is the setup_s figure.
 *
 * Not combined with another step executor: the dp plugin also takes the
 * step over, and the first enabled plugin owns the hook. A configuration
 * where this plugin never ran a step says so in the log. */
#include <dlbench/model_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kd_figures.h"
#include "kd_teacher.h"

enum { KD_TEACHER, KD_TEMPERATURE, KD_ALPHA, KD_CACHE, KD_STEPS,
       KD_N_PARAMS };

static const struct dlb_param_def distill_params[KD_N_PARAMS] = {
    [KD_TEACHER] = {
        .name = "teacher", .type = DLB_PARAM_STRING, .def = "vgg-small",
        .help = "the teacher network, named as the suite's model key is "
                "(suites/models/NAME.ini, or a path)",
    },
    [KD_TEMPERATURE] = {
        .name = "temperature", .type = DLB_PARAM_FLOAT, .def = "4",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 0.01,
        .max = 100,
        .help = "softmax temperature T of the soft targets (above 0; higher "
                "is softer)",
    },
    [KD_ALPHA] = {
        .name = "alpha", .type = DLB_PARAM_FLOAT, .def = "0.9",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 0, .max = 1,
        .help = "weight of the soft-target term (0: hard labels only, the "
                "baseline step; 1: the teacher only)",
    },
    [KD_CACHE] = {
        .name = "teacher_cache", .type = DLB_PARAM_BOOL, .def = "on",
        .help = "compute the teacher's logits for the whole training set "
                "once (on) or at every step (off)",
    },
    [KD_STEPS] = {
        .name = "teacher_steps", .type = DLB_PARAM_INT, .def = "0",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 0, .max = 1e9,
        .unit = "steps",
        .help = "training steps of the teacher's reference weights (batch "
                "64, cached); 0 = the harness' default, one epoch",
    },
};

struct distill {
    char teacher_name[512];
    uint64_t teacher_steps;
    float temperature, alpha;
    int use_cache;
    int ready;                 /* the teacher is open */
    struct kd_teacher teacher;
    const struct dlb_host *h;  /* for fini */
    float *tlogits;            /* one batch of teacher logits */
    uint32_t tlogits_cap;
    /* Figures: the plugin's own steps, after setup. */
    uint64_t steps;
    double step_s, teacher_s, setup_s, cache_s;
    double last_loss;          /* the blended loss of the last step */
};

/* The training step this plugin takes, an extra of the model interface;
 * NULL when this core has none. */
static dlb_extra_distill_step soft_target_step(const struct dlb_host *h)
{
    return (dlb_extra_distill_step)h->model_api->extra(
        h, "distill.soft_target_step");
}

static dlb_status distill_probe(const struct dlb_host *h,
                                const struct dlb_params *p, char *reason,
                                size_t reason_len)
{
    char why[400] = "";
    if (!p || p->count < KD_N_PARAMS)
        return DLB_ERR_INTERNAL;
    if (!soft_target_step(h)) {
        snprintf(reason, reason_len, "needs a dlbench core with the extra "
                 "distill.soft_target_step");
        return DLB_ERR_UNSUPPORTED;
    }
    /* An unknown teacher fails here, before any work, with where the core
     * looked for it. */
    const char *name = p->values[KD_TEACHER].s;
    dlb_status s = h->model_api->find(h, name, why, sizeof why);
    if (s != DLB_OK)
        snprintf(reason, reason_len, "teacher '%s': %s", name, why);
    return s;
}

/* At suite load (ABI 1.3): the teacher must exist, so that a misspelt
 * name stops the run with the suite line that set it, not each
 * configuration with a skip. The probe looks again in the configuration's
 * process, for cores without this hook. */
static dlb_status distill_check(const struct dlb_params *p,
                                const struct dlb_config_view *cv, int *param,
                                char *reason, size_t reason_len)
{
    char why[400] = "";
    if (!p || p->count < KD_N_PARAMS)
        return DLB_ERR_INTERNAL;
    if (!cv || cv->struct_size < offsetof(struct dlb_config_view, find_model) +
                                     sizeof cv->find_model ||
        !cv->find_model)
        return DLB_OK;
    const char *name = p->values[KD_TEACHER].s;
    if (cv->find_model(cv, name, why, sizeof why) == DLB_OK)
        return DLB_OK;
    *param = KD_TEACHER;
    snprintf(reason, reason_len, "teacher '%s': %s", name, why);
    return DLB_ERR_INPUT;
}

static dlb_status distill_init(const struct dlb_host *h,
                               const struct dlb_params *p, void **state)
{
    if (!p || p->count < KD_N_PARAMS || !soft_target_step(h))
        return DLB_ERR_INTERNAL;
    /* The teacher's reference weights, where not cached, are trained
     * before the measured backend opens, in a process of their own: at
     * its first step they would be trained among that backend's threads,
     * more slowly (ABI 2.2; an older core trains them there). */
    struct dlb_model_open how = {.struct_size = sizeof how,
                                 .name = p->values[KD_TEACHER].s,
                                 .steps = (uint64_t)p->values[KD_STEPS].i};
    dlb_status s = DLB_MODEL_API_HAS(h->model_api, prepare)
                       ? h->model_api->prepare(h, &how) : DLB_OK;
    if (s != DLB_OK)
        return s;
    struct distill *d = calloc(1, sizeof *d);
    if (!d)
        return DLB_ERR_NOMEM;
    snprintf(d->teacher_name, sizeof d->teacher_name, "%s",
             p->values[KD_TEACHER].s);
    d->temperature = (float)p->values[KD_TEMPERATURE].f;
    d->alpha = (float)p->values[KD_ALPHA].f;
    d->use_cache = p->values[KD_CACHE].i != 0;
    d->teacher_steps = (uint64_t)p->values[KD_STEPS].i;
    d->h = h;
    *state = d;
    return DLB_OK;
}

static void distill_fini(void *state)
{
    struct distill *d = state;
    kd_teacher_close(&d->teacher, d->h);
    free(d->tlogits);
    free(d);
}

/* The first step: the teacher, its cache, the figures of both models. */
static dlb_status setup(struct distill *d, const struct dlb_host *h,
                        struct dlb_model *student, uint32_t batch)
{
    char why[512] = "";
    double t0 = h->now(h);
    dlb_status s = kd_teacher_open(&d->teacher, h, d->teacher_name,
                                   d->teacher_steps, student, why, sizeof why);
    if (s != DLB_OK) {
        h->log(h, DLB_LOG_ERROR, "%s", why);
        return s;
    }
    d->ready = 1;
    if ((s = kd_figures_record(h, d->teacher.model, student,
                               d->teacher.classes)) != DLB_OK)
        return s;
    double t1 = h->now(h);
    /* The chunks are the batch size: the teacher then computes each image
     * as it would on the fly. */
    if (d->use_cache &&
        (s = kd_teacher_build_cache(&d->teacher, h, batch)) != DLB_OK) {
        h->log(h, DLB_LOG_ERROR, "teacher cache: could not be built");
        return s;
    }
    d->cache_s = d->use_cache ? h->now(h) - t1 : 0.0;
    d->setup_s = h->now(h) - t0;
    if (d->use_cache)
        h->metric(h, "cache_bytes", "bytes",
                  (double)kd_cache_bytes(d->teacher.cache));
    return DLB_OK;
}

static dlb_status distill_train_step(void *state, const struct dlb_host *h,
                                     struct dlb_model *model,
                                     const struct dlb_batch *b)
{
    struct distill *d = state;
    dlb_status s;
    if (!d->ready && (s = setup(d, h, model, b->n)) != DLB_OK)
        return s;
    if (b->n > d->tlogits_cap) {
        free(d->tlogits);
        d->tlogits = malloc((size_t)b->n * d->teacher.classes *
                            sizeof *d->tlogits);
        d->tlogits_cap = d->tlogits ? b->n : 0;
        if (!d->tlogits)
            return DLB_ERR_NOMEM;
    }
    double t0 = h->now(h);
    /* alpha = 0 is the baseline step: the teacher is not asked. */
    s = d->alpha > 0.0f ? kd_teacher_logits(&d->teacher, h, b, d->tlogits)
                        : DLB_OK;
    double t1 = h->now(h);
    if (s == DLB_OK)
        s = soft_target_step(h)(h, model, b, d->tlogits, d->temperature,
                                d->alpha, &d->last_loss);
    d->steps++;
    d->teacher_s += t1 - t0;
    d->step_s += h->now(h) - t0;
    return s;
}

static dlb_status distill_metrics(void *state, const struct dlb_host *h)
{
    struct distill *d = state;
    const struct kd_teacher *t = &d->teacher;
    if (!d->steps) {
        h->log(h, DLB_LOG_WARN, "no training step ran through distill: in "
               "mode = infer nothing is distilled, and another step "
               "executor (dp) enabled before it owns the step");
        return DLB_OK;
    }
    h->metric(h, "steps", "steps", (double)d->steps);
    h->metric(h, "step_s", "s", d->step_s / (double)d->steps);
    h->metric(h, "teacher_s", "s", d->teacher_s / (double)d->steps);
    if (d->step_s > 0)
        h->metric(h, "teacher_share", "%", 100.0 * d->teacher_s / d->step_s);
    h->metric(h, "setup_s", "s", d->setup_s);
    /* The core's train_loss_last comes from its own step, which this
     * plugin replaces: the blended loss of the last step stands in. */
    h->metric(h, "train_loss_last", "", d->last_loss);
    if (d->use_cache) {
        h->metric(h, "cache_build_s", "s", d->cache_s);
        if (t->hits + t->misses)
            h->metric(h, "cache_hit_rate", "%",
                      100.0 * (double)t->hits / (double)(t->hits + t->misses));
    }
    return DLB_OK;
}

static const struct dlb_executor_hooks distill_executor = {
    .train_step = distill_train_step,
};

static const struct dlb_plugin distill_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "distill",
    .version = "1.0",
    .summary = "knowledge distillation: train the model on a teacher's "
               "softened outputs",
    .params = distill_params,
    .n_params = KD_N_PARAMS,
    .probe = distill_probe,
    .init = distill_init,
    .fini = distill_fini,
    .executor = &distill_executor,
    .metrics = distill_metrics,
    .check = distill_check,
};

DLB_PLUGIN_DEFINE(distill_plugin)
