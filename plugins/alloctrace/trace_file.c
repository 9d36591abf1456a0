#include "trace_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The installed traces sit with the installed suites. */
#ifndef DLB_TRACE_DIR
#define DLB_TRACE_DIR "/usr/local/share/dlbench/suites/traces"
#endif

#define AT_MAX_BYTES ((uint64_t)1 << 40) /* a typo, not a request */

static int readable(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f)
        fclose(f);
    return f != NULL;
}

/* The suites' own search order: ./suites, $DLBENCH_SUITE_PATH, installed. */
static int find(const char *name, char *path, size_t len)
{
    if (strchr(name, '/')) {
        snprintf(path, len, "%s", name);
        return readable(path);
    }
    snprintf(path, len, "suites/traces/%s.trace", name);
    if (readable(path))
        return 1;
    const char *sp = getenv("DLBENCH_SUITE_PATH");
    while (sp && *sp) {
        size_t n = strcspn(sp, ":");
        if (n > 0) {
            snprintf(path, len, "%.*s/traces/%s.trace", (int)n, sp, name);
            if (readable(path))
                return 1;
        }
        sp += n + (sp[n] == ':');
    }
    snprintf(path, len, "%s/%s.trace", DLB_TRACE_DIR, name);
    return readable(path);
}

static dlb_status grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return DLB_OK;
    size_t n = *cap ? *cap * 2 : 256;
    void *q = realloc(*p, n * elem);
    if (!q)
        return DLB_ERR_NOMEM;
    *p = q;
    *cap = n;
    return DLB_OK;
}

struct parse {
    struct dlb_at_trace *t;
    size_t ev_cap, id_cap;
    char *live;           /* per ID */
    size_t live_cap;
    uint64_t live_bytes;
};

static dlb_status line_event(struct parse *ps, const char *line, char *bad,
                             size_t len)
{
    struct dlb_at_trace *t = ps->t;
    unsigned long long id, bytes;
    char kind, extra;
    int n = sscanf(line, " %c %llu %llu %c", &kind, &id, &bytes, &extra);
    if (kind == 'a' && n == 3) {
        if (id != t->n_ids) {
            snprintf(bad, len, "allocation id %llu out of order (expected %zu)", id,
                     t->n_ids);
            return DLB_ERR_INPUT;
        }
        if (bytes > AT_MAX_BYTES) {
            snprintf(bad, len, "%llu bytes is more than 1 TiB", bytes);
            return DLB_ERR_INPUT;
        }
        if (grow((void **)&t->size, &ps->id_cap, t->n_ids + 1, sizeof *t->size) ||
            grow((void **)&ps->live, &ps->live_cap, t->n_ids + 1, 1))
            return DLB_ERR_NOMEM;
        t->size[t->n_ids] = (size_t)bytes;
        ps->live[t->n_ids++] = 1;
        t->bytes += bytes;
        ps->live_bytes += bytes;
        if (ps->live_bytes > t->live_peak)
            t->live_peak = ps->live_bytes;
        if (bytes > t->largest)
            t->largest = bytes;
    } else if (kind == 'f' && n == 2) {
        if (id >= t->n_ids || !ps->live[id]) {
            snprintf(bad, len, "free of id %llu, which is not live", id);
            return DLB_ERR_INPUT;
        }
        ps->live[id] = 0;
        ps->live_bytes -= t->size[id];
    } else {
        snprintf(bad, len, "expected 'a ID BYTES' or 'f ID'");
        return DLB_ERR_INPUT;
    }
    if (grow((void **)&t->ev, &ps->ev_cap, t->n + 1, sizeof *t->ev))
        return DLB_ERR_NOMEM;
    t->ev[t->n++] = (struct dlb_at_event){(size_t)id, kind == 'a'};
    return DLB_OK;
}

dlb_status dlb_at_trace_load(const char *name, struct dlb_at_trace *t,
                             char *why, size_t len)
{
    char path[4096], line[256], bad[160];
    memset(t, 0, sizeof *t);
    if (!find(name, path, sizeof path)) {
        snprintf(why, len, "trace '%s': %s", name, strchr(name, '/')
                 ? strerror(errno)
                 : "no NAME.trace in ./suites/traces, $DLBENCH_SUITE_PATH/traces "
                   "or " DLB_TRACE_DIR);
        return DLB_ERR_INPUT;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, len, "%s: %s", path, strerror(errno));
        return DLB_ERR_IO;
    }
    struct parse ps = {.t = t};
    dlb_status st = DLB_OK;
    for (unsigned lineno = 1; st == DLB_OK && fgets(line, sizeof line, f); lineno++) {
        const char *c = line + strspn(line, " \t");
        if (*c == '#' || *c == '\n' || *c == '\0')
            continue;
        st = line_event(&ps, c, bad, sizeof bad);
        if (st == DLB_ERR_INPUT)
            snprintf(why, len, "%s:%u: %s", path, lineno, bad);
        else if (st != DLB_OK)
            snprintf(why, len, "%s: out of memory", path);
    }
    fclose(f);
    free(ps.live);
    if (st == DLB_OK && t->n_ids == 0) {
        snprintf(why, len, "%s: no allocations in the trace", path);
        st = DLB_ERR_INPUT;
    }
    if (st != DLB_OK)
        dlb_at_trace_free(t);
    return st;
}

void dlb_at_trace_free(struct dlb_at_trace *t)
{
    free(t->ev);
    free(t->size);
    memset(t, 0, sizeof *t);
}
