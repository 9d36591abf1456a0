/* What the unit tests of the executor plugins (dp, mp) share: a host with
 * the cpu backend (ref without it), models from spec files in the tree,
 * and seeded batches. Include after check.h, with the core's private
 * headers on the include path. */
#ifndef DLB_TEST_PLUGIN_FIXTURE_H
#define DLB_TEST_PLUGIN_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "child/host.h"
#include "model/model.h"
#include "model/model_file.h"
#include "util/rng.h"

#define SEED 42

struct env {
    struct dlb_host_shared shared;
    struct dlb_host_priv host;
    const char *backend;
};

/* The host a plugin's engines see, named `plugin` in its messages. */
static const struct dlb_host *env_open(struct env *e, const char *plugin)
{
    char why[256];
    memset(e, 0, sizeof *e);
    e->shared.metrics = json_object();
    dlb_host_setup(&e->host, &e->shared, plugin, SEED, 0);
    e->backend = dlb_backend_available("cpu", why, sizeof why) ? "cpu" : "ref";
    e->host.pub.backend_name = e->backend;
    return &e->host.pub;
}

static void env_close(struct env *e)
{
    json_decref(e->shared.metrics);
    json_decref(e->shared.world);
}

static struct dlb_model *model_open(const struct env *e,
                                    const struct dlb_model_spec *spec)
{
    struct dlb_backend_config cfg = {.threads = 1, .seed = SEED};
    struct dlb_backend *be = NULL;
    struct dlb_model *m = NULL;
    struct dlb_error err = {""};
    char why[512];
    if (dlb_backend_open(e->backend, &cfg, &be, why, sizeof why) != DLB_OK) {
        fprintf(stderr, "%s\n", why);
        return NULL;
    }
    if (dlb_model_create(spec, be, DLB_F32, SEED, &m, &err) != DLB_OK) {
        fprintf(stderr, "%s\n", err.msg);
        dlb_backend_close(be);
        return NULL;
    }
    return m;
}

static void model_close(struct dlb_model *m)
{
    struct dlb_backend *be = m ? dlb_model_backend(m) : NULL;
    dlb_model_destroy(m);
    dlb_backend_close(be);
}

static struct dlb_model_spec *spec_load(const char *path_in_tree)
{
    const char *srcdir = getenv("srcdir");
    char path[1024];
    struct dlb_model_spec *spec = NULL;
    struct dlb_error err = {""};
    snprintf(path, sizeof path, "%s/%s", srcdir ? srcdir : ".", path_in_tree);
    if (dlb_model_file_load(path, &spec, &err) != DLB_OK)
        fprintf(stderr, "%s\n", err.msg);
    return spec;
}

/* Step `step`'s batch of n seeded noise images and labels. */
static void make_batch(const struct dlb_model_spec *sp, uint64_t step,
                       uint32_t n, float *images, int32_t *labels,
                       struct dlb_batch *b)
{
    struct dlb_rng rng;
    size_t per = (size_t)sp->in_c * sp->in_h * sp->in_w;
    dlb_rng_seed_stream(&rng, SEED, 1000 + step);
    for (size_t i = 0; i < n * per; i++)
        images[i] = (float)(dlb_rng_double(&rng) * 2.0 - 1.0);
    for (uint32_t i = 0; i < n; i++)
        labels[i] = (int32_t)dlb_rng_below(&rng, sp->classes);
    *b = (struct dlb_batch){images, labels, n, sp->in_c, sp->in_h, sp->in_w};
}

#endif
