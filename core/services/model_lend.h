/* Models lent to plugins (model_api's open and release): clones on backend
 * handles of their own, and models a workload builds by name, moved to
 * the backend a plugin asks for and set to the precision it asks for.
 * The host checks what a plugin may get wrong and logs under its name;
 * this keeps the models until they are released or withdrawn. */
#ifndef DLB_CORE_SERVICES_MODEL_LEND_H
#define DLB_CORE_SERVICES_MODEL_LEND_H

#include <sched.h>
#include <stdint.h>

#include "model/model.h"

struct dlb_model_spec;

/* Where a lent model runs, and in what type. */
struct dlb_model_lend_how {
    /* The CPUs the process was allowed before a backend pinned any thread
     * (NULL: not known, no pinning): slot >= 0 pins the calling thread to
     * `threads` of them, its share, before the backend opens, so that the
     * backend's threads pin inside that share. slot > 0 is also the
     * device on a GPU backend. */
    const cpu_set_t *cpus;
    int threads, slot;
    /* The backend a plugin asked for; NULL: a clone goes on `home` (the
     * configuration's), a named model stays where the workload built it. */
    const char *backend, *home;
    /* An index from dlb_model_lend_precision_find; -1: as built. */
    int precision;
    uint64_t seed;
};

/* The named models lent, closed with dlb_model_lend_close_all when the
 * workload that built them withdraws its data. Zeroed: empty. */
struct dlb_model_lend_named;
struct dlb_model_lend_registry {
    struct dlb_model_lend_named *head;
};

/* The precision called `name` (fp32, bf16 or fp16), -1 when none is. */
int dlb_model_lend_precision_find(const char *name);

/* A replica of src (dlb_model_replica_create) on how's backend, in how's
 * precision, kept until dlb_model_lend_release; DLB_ERR_INTERNAL when
 * how names no backend at all. Safe from several threads at once:
 * executors' workers open and release clones. */
dlb_status dlb_model_lend_clone(const struct dlb_model *src,
                                const struct dlb_model_lend_how *how,
                                struct dlb_model **out, struct dlb_error *err);

/* Keep m, the model a workload built as `name` from `spec`, in `reg`,
 * moved onto how->backend unless it is on it already and in how's
 * precision. m and spec are reg's from the call on: on failure both are
 * closed and nothing is kept. */
dlb_status dlb_model_lend_named(struct dlb_model_lend_registry *reg,
                                const char *name, struct dlb_model_spec *spec,
                                struct dlb_model *m,
                                const struct dlb_model_lend_how *how,
                                struct dlb_model **out, struct dlb_error *err);

/* Close m, a clone or a named model of `reg`. A model in neither (NULL,
 * or one dlb_model_lend_close_all already closed) is left alone. */
void dlb_model_lend_release(struct dlb_model_lend_registry *reg,
                            struct dlb_model *m);
/* Close every named model of `reg`. */
void dlb_model_lend_close_all(struct dlb_model_lend_registry *reg);
/* Whether m is a named model of `reg` (a plugin's, not the workload's). */
int dlb_model_lend_holds(const struct dlb_model_lend_registry *reg,
                         const struct dlb_model *m);

#endif
