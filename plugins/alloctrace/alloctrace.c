/* alloctrace: a workload that replays a recorded allocation trace through
 * h->alloc / h->free, so an allocator (the mempool plugin, or the system
 * allocator when none is enabled) can be measured on exactly the requests
 * one training step makes, without the step's arithmetic around them.
 *
 * A trace is text, one event a line (mempool's trace_out writes it):
 *
 *     # comment
 *     a ID BYTES     allocate BYTES; the block is called ID from now on
 *     f ID           free block ID
 *
 * IDs are new at each `a`. One workload step replays the whole trace, then
 * frees in reverse order whatever it left live, so every step does the same
 * work. `touch` writes to the blocks as the real step would: one byte per
 * page shows what fresh pages (page faults) cost; whole blocks add the
 * memory traffic. Throughput counts allocations: samples/s is alloc+free
 * pairs per second. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <dlbench/plugin.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_file.h"

static const char *const at_touches[] = {"none", "page", "all", NULL};
enum { AT_NONE, AT_PAGE, AT_ALL };

enum { AT_TRACE, AT_TOUCH, AT_N_PARAMS };

static const struct dlb_param_def at_params[AT_N_PARAMS] = {
    [AT_TRACE] = {
        .name = "trace", .type = DLB_PARAM_STRING, .def = "lenet-b256-train",
        .help = "a trace file, or a NAME looked up as NAME.trace in ./suites/traces,"
                " $DLBENCH_SUITE_PATH/traces and the installed suites/traces",
    },
    [AT_TOUCH] = {
        .name = "touch", .type = DLB_PARAM_ENUM, .def = "none",
        .choices = at_touches,
        .help = "write to each block after allocating it: none, page (a byte "
                "per 4 KiB: page faults show), all (the whole block)",
    },
};

struct at_state {
    char *trace;
    int touch;
};

struct at_workload {
    const struct dlb_host *h;
    const struct at_state *s;
    struct dlb_at_trace tr;
    void **ptr;   /* per ID: the live block, or NULL */
    uint64_t steps;
};

static dlb_status at_init(const struct dlb_host *h, const struct dlb_params *p,
                          void **state)
{
    (void)h;
    if (!p || p->count < AT_N_PARAMS)
        return DLB_ERR_INTERNAL;
    struct at_state *s = calloc(1, sizeof *s);
    if (!s || !(s->trace = strdup(p->values[AT_TRACE].s))) {
        free(s);
        return DLB_ERR_NOMEM;
    }
    s->touch = (int)p->values[AT_TOUCH].i;
    *state = s;
    return DLB_OK;
}

static void at_fini(void *state)
{
    struct at_state *s = state;
    free(s->trace);
    free(s);
}

static dlb_status at_setup(void *state, const struct dlb_host *h,
                           struct dlb_workload_info *info, void **wl)
{
    const struct at_state *s = state;
    struct at_workload *w = calloc(1, sizeof *w);
    char why[512] = "";
    if (!w)
        return DLB_ERR_NOMEM;
    w->h = h;
    w->s = s;
    dlb_status st = dlb_at_trace_load(s->trace, &w->tr, why, sizeof why);
    if (st != DLB_OK) {
        h->log(h, DLB_LOG_ERROR, "%s", why);
        free(w);
        return st;
    }
    if (!(w->ptr = calloc(w->tr.n_ids ? w->tr.n_ids : 1, sizeof *w->ptr))) {
        dlb_at_trace_free(&w->tr);
        free(w);
        return DLB_ERR_NOMEM;
    }
    info->samples_per_step = (double)w->tr.n_ids;
    info->flops_per_step = 0;
    *wl = w;
    return DLB_OK;
}

static void touch(void *p, size_t bytes, int how)
{
    volatile char *c = p;
    if (how == AT_ALL) {
        memset(p, 1, bytes);
        return;
    }
    for (size_t o = 0; o < bytes; o += 4096)
        c[o] = 1;
}

static void free_live(struct at_workload *w)
{
    for (size_t id = w->tr.n_ids; id-- > 0;)
        if (w->ptr[id]) {
            w->h->free(w->h, w->ptr[id], w->tr.size[id]);
            w->ptr[id] = NULL;
        }
}

static dlb_status at_step(void *wl)
{
    struct at_workload *w = wl;
    const struct dlb_host *h = w->h;
    for (size_t i = 0; i < w->tr.n; i++) {
        const struct dlb_at_event *e = &w->tr.ev[i];
        size_t bytes = w->tr.size[e->id];
        if (e->is_alloc) {
            void *p = h->alloc(h, bytes);
            if (!p) {
                h->log(h, DLB_LOG_ERROR, "allocation failed: %zu bytes (event %zu)",
                       bytes, i + 1);
                free_live(w);
                return DLB_ERR_NOMEM;
            }
            if (w->s->touch != AT_NONE)
                touch(p, bytes, w->s->touch);
            w->ptr[e->id] = p;
        } else {
            h->free(h, w->ptr[e->id], bytes);
            w->ptr[e->id] = NULL;
        }
    }
    free_live(w);
    w->steps++;
    return DLB_OK;
}

static dlb_status at_evaluate(void *wl)
{
    const struct at_workload *w = wl;
    const struct dlb_host *h = w->h;
    dlb_status st = h->metric(h, "allocs_per_step", "count", (double)w->tr.n_ids);
    if (st == DLB_OK)
        st = h->metric(h, "bytes_per_step", "bytes", (double)w->tr.bytes);
    if (st == DLB_OK)
        st = h->metric(h, "trace_live_peak", "bytes", (double)w->tr.live_peak);
    if (st == DLB_OK)
        st = h->metric(h, "largest_block", "bytes", (double)w->tr.largest);
    return st;
}

static void at_teardown(void *wl)
{
    struct at_workload *w = wl;
    if (!w)
        return;
    free_live(w);
    free(w->ptr);
    dlb_at_trace_free(&w->tr);
    free(w);
}

static const struct dlb_workload_hooks at_workload = {
    .setup = at_setup,
    .step = at_step,
    .evaluate = at_evaluate,
    .teardown = at_teardown,
};

static const struct dlb_plugin alloctrace_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "alloctrace",
    .version = "1.0",
    .summary = "workload: replays a recorded allocation trace through the allocator",
    .params = at_params,
    .n_params = AT_N_PARAMS,
    .init = at_init,
    .fini = at_fini,
    .workload = &at_workload,
};

DLB_PLUGIN_DEFINE(alloctrace_plugin)
