/* Workloads built into the core (the reference CNN); plugins may bring
 * others through their workload hooks. */
#ifndef DLB_CORE_WORKLOADS_H
#define DLB_CORE_WORKLOADS_H

#include <jansson.h>

#include <dlbench/plugin.h>
#include "plan/plan.h"

/* What a built-in workload's setup receives as its `state`. */
struct dlb_workload_ctx {
    const struct dlb_plan *plan;
    const struct dlb_config *config;
    /* The suite file as the user named it (the plan's suite is the run
     * directory's copy): the directory where its models/ may be. */
    const char *suite_origin;
    const struct dlb_host *host;      /* the core's host */

    /* Hook points of active plugins; NULL hooks mean the baseline of
     * doc/plugin-guide.md's table of hook points. Each comes with the
     * plugin's state and host. */
    const struct dlb_batch_source_hooks *batch_source;
    void *batch_source_state;
    const struct dlb_host *batch_source_host;
    const struct dlb_precision_hooks *precision;
    void *precision_state;
    unsigned precision_abi_minor; /* the plugin's ABI minor: which hooks exist */
    const struct dlb_transform_hooks *transform;
    void *transform_state;
    const struct dlb_host *transform_host;
    const struct dlb_executor_hooks *executor;
    void *executor_state;
    const struct dlb_host *executor_host;

    /* Where a failing hook says why (the record's "reason"): a skipped
     * configuration names what is missing. */
    char *reason;
    size_t reason_len;

    /* The data the workload ran on, for the record's "dataset" member
     * (doc/results-schema.md): set by the workload, owned by the child. */
    json_t *dataset;

    /* Which test images the accuracy figure's model classified correctly,
     * as util/hexbits.h writes them (the record's "test_correct"): set by
     * the workload with its accuracy, owned by the child. */
    json_t *test_correct;

    /* dlbench export: after the quality run (training, the transform,
     * the test-set accuracy), the model is written here as ONNX; NULL
     * in a normal run. */
    const char *export_onnx;
};

/* The reference CNN (core/child/workload_cnn.c), workload "cnn". */
extern const struct dlb_workload_hooks dlb_workload_cnn;

/* The hooks of built-in workload NAME, or NULL. */
const struct dlb_workload_hooks *dlb_builtin_workload(const char *name);

#endif
