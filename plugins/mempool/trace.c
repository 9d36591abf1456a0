#define _POSIX_C_SOURCE 200809L /* strdup */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ev {
    const void *p;
    size_t bytes;
    int is_alloc;
};

struct dlb_mp_trace {
    char *path;
    uint64_t step;
    int recording, done;
    struct ev *evs;
    size_t n, cap;
    int lost; /* an event could not be stored: the trace would lie */
};

dlb_status dlb_mp_trace_new(const char *path, uint64_t step,
                            struct dlb_mp_trace **out)
{
    struct dlb_mp_trace *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(path))) {
        free(t);
        return DLB_ERR_NOMEM;
    }
    t->step = step < 2 ? 2 : step;
    *out = t;
    return DLB_OK;
}

void dlb_mp_trace_delete(struct dlb_mp_trace *t)
{
    if (!t)
        return;
    free(t->evs);
    free(t->path);
    free(t);
}

static void note(struct dlb_mp_trace *t, const void *p, size_t bytes, int is_alloc)
{
    if (!t || !t->recording)
        return;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        struct ev *e = realloc(t->evs, cap * sizeof *e);
        if (!e) {
            t->lost = 1;
            return;
        }
        t->evs = e;
        t->cap = cap;
    }
    t->evs[t->n++] = (struct ev){p, bytes, is_alloc};
}

void dlb_mp_trace_alloc(struct dlb_mp_trace *t, const void *p, size_t bytes)
{
    note(t, p, bytes, 1);
}

void dlb_mp_trace_free(struct dlb_mp_trace *t, const void *p, size_t bytes)
{
    note(t, p, bytes, 0);
}

/* Index of the live entry for p among ids[0..n), or n. An address can be
 * reused within a step, so only live entries count. */
static size_t find_live(const struct ev *evs, const size_t *ids, const int *live,
                        size_t n, const void *p)
{
    for (size_t k = n; k-- > 0;)
        if (live[k] && evs[ids[k]].p == p)
            return k;
    return n;
}

/* Blocks freed in the step but allocated before it come first, as
 * allocations with their own ids, so that the replay owns them too. */
static int write_events(const struct dlb_mp_trace *t, FILE *f)
{
    size_t *ids = calloc(t->n + 1, sizeof *ids);
    int *live = calloc(t->n + 1, sizeof *live);
    size_t *id_of = calloc(t->n + 1, sizeof *id_of);
    if (!ids || !live || !id_of) {
        free(ids), free(live), free(id_of);
        return -1;
    }
    size_t n_ids = 0, n_pre = 0;
    /* Pass 1: which frees meet no allocation of this step. */
    for (size_t i = 0; i < t->n; i++) {
        const struct ev *e = &t->evs[i];
        size_t k = find_live(t->evs, ids, live, n_ids, e->p);
        if (e->is_alloc) {
            ids[n_ids] = i;
            live[n_ids++] = 1;
        } else if (k < n_ids) {
            live[k] = 0;
        } else {
            fprintf(f, "a %zu %zu\n", n_pre++, e->bytes);
        }
    }
    /* Pass 2: the step's events with ids after the prologue's. */
    memset(live, 0, (t->n + 1) * sizeof *live);
    n_ids = 0;
    size_t next_pre = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct ev *e = &t->evs[i];
        size_t k = find_live(t->evs, ids, live, n_ids, e->p);
        if (e->is_alloc) {
            ids[n_ids] = i;
            id_of[n_ids] = n_pre + n_ids;
            live[n_ids] = 1;
            fprintf(f, "a %zu %zu\n", id_of[n_ids++], e->bytes);
        } else if (k < n_ids) {
            live[k] = 0;
            fprintf(f, "f %zu\n", id_of[k]);
        } else {
            fprintf(f, "f %zu\n", next_pre++);
        }
    }
    free(ids), free(live), free(id_of);
    return 0;
}

static dlb_status write_file(const struct dlb_mp_trace *t, const struct dlb_host *h)
{
    FILE *f = fopen(t->path, "w");
    if (!f) {
        h->log(h, DLB_LOG_ERROR, "trace_out %s: %s", t->path, strerror(errno));
        return DLB_ERR_IO;
    }
    fprintf(f, "# dlbench allocation trace 1\n"
               "# recorded by mempool: step %llu on backend %s, %zu events\n"
               "# a ID BYTES allocates, f ID frees; see plugins/alloctrace\n",
            (unsigned long long)t->step, h->backend_name ? h->backend_name : "?",
            t->n);
    int bad = write_events(t, f);
    if (fclose(f) != 0 || bad) {
        h->log(h, DLB_LOG_ERROR, "trace_out %s: write failed", t->path);
        return DLB_ERR_IO;
    }
    h->log(h, DLB_LOG_INFO, "allocation trace of step %llu written to %s",
           (unsigned long long)t->step, t->path);
    return DLB_OK;
}

dlb_status dlb_mp_trace_step_end(struct dlb_mp_trace *t, uint64_t done,
                                 const struct dlb_host *h)
{
    if (!t || t->done)
        return DLB_OK;
    if (done + 1 == t->step) {
        t->recording = 1;
        return DLB_OK;
    }
    if (done != t->step)
        return DLB_OK;
    t->recording = 0;
    t->done = 1;
    if (t->lost) {
        h->log(h, DLB_LOG_ERROR, "trace_out %s: out of memory while recording",
               t->path);
        return DLB_ERR_NOMEM;
    }
    return write_file(t, h);
}
