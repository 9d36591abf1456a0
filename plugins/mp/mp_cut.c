/* Where the network is cut into stages: named cut points, checked against
 * the layer names, or the split that balances the stages' cost. A stage
 * takes one tensor in and hands one on, so on a residual network a cut
 * goes only between blocks: where no later layer reads an output from
 * before the cut but the one just before it (`reader`, per layer: the
 * first layer that does, n_layers where none; NULL for a chain). */
#include <stdio.h>
#include <string.h>

#include <dlbench/model_api.h>

#include "mp.h"

int mp_stage_count(const struct mp_settings *s)
{
    return s->engine == MP_THREADS ? s->stages : s->ranks;
}

static int find_layer(unsigned n, const char *const *names, const char *name,
                      size_t len)
{
    for (unsigned i = 0; i < n; i++)
        if (strlen(names[i]) == len && !strncmp(names[i], name, len))
            return (int)i;
    return -1;
}

static int cuttable(unsigned n, const uint32_t *reader, unsigned k)
{
    return k > 0 && k < n && (!reader || reader[k] >= n);
}

/* The layers a stage may begin at, after `reason`'s first o characters. */
static void list_cuttable(unsigned n, const char *const *names,
                          const uint32_t *reader, char *reason, size_t len,
                          size_t o)
{
    int any = 0;
    for (unsigned k = 1; k < n && o < len; k++)
        if (cuttable(n, reader, k))
            o += (size_t)snprintf(reason + o, len - o, "%s %s",
                                  any++ ? "," : "", names[k]);
    if (!any && o < len)
        snprintf(reason + o, len - o, " none");
}

static unsigned count_cuttable(unsigned n, const uint32_t *reader)
{
    unsigned c = 0;
    for (unsigned k = 1; k < n; k++)
        c += (unsigned)cuttable(n, reader, k);
    return c;
}

/* Parse the cuts into first[1..]; returns how many, or -1 with reason. */
static int parse_cuts(const char *cuts, unsigned n, const char *const *names,
                      const uint32_t *reader, unsigned *first, char *reason,
                      size_t len)
{
    int count = 0;
    const char *p = cuts;
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *e = p;
        while (*e && *e != ',' && *e != ' ')
            e++;
        if (e == p)
            break;
        int at = find_layer(n, names, p, (size_t)(e - p));
        if (at < 0) {
            size_t o = (size_t)snprintf(reason, len,
                                        "cut point '%.*s' names no "
                                        "layer of the model; its layers are",
                                        (int)(e - p), p);
            for (unsigned i = 0; i < n && o < len; i++)
                o += (size_t)snprintf(reason + o, len - o, "%s %s",
                                      i ? "," : "", names[i]);
            return -1;
        }
        if (at == 0) {
            snprintf(reason, len, "cut point '%s' is the first layer: a cut "
                     "names the first layer of a stage after the first",
                     names[at]);
            return -1;
        }
        if (!cuttable(n, reader, (unsigned)at)) {
            size_t o = (size_t)snprintf(
                reason, len, "cut point '%s' would hand two tensors on: "
                "layer '%s' reads an output from before it (a residual "
                "block's shortcut); cut between blocks, before one of:",
                names[at], names[reader[at]]);
            list_cuttable(n, names, reader, reason, len, o);
            return -1;
        }
        if (count >= MP_MAX_STAGES - 1) {
            snprintf(reason, len, "more than %d cut points",
                     MP_MAX_STAGES - 1);
            return -1;
        }
        if (count > 0 && (unsigned)at <= first[count]) {
            snprintf(reason, len, "cut point '%s' does not come after '%s': "
                     "name the cuts in the network's order, each once",
                     names[at], names[first[count]]);
            return -1;
        }
        first[++count] = (unsigned)at;
        p = e;
    }
    return count;
}

dlb_status mp_cut_check(const struct mp_settings *s, unsigned n_layers,
                        const char *const *names, const uint32_t *reader,
                        int *param, char *reason, size_t len)
{
    unsigned first[MP_MAX_STAGES + 1];
    int S = mp_stage_count(s);
    int which = s->engine == MP_THREADS ? MP_STAGES : MP_RANKS;
    if (S > MP_MAX_STAGES) {
        *param = which;
        snprintf(reason, len, "%d stages: at most %d", S, MP_MAX_STAGES);
        return DLB_ERR_INPUT;
    }
    if ((unsigned)S > n_layers) {
        *param = which;
        snprintf(reason, len, "%d stages for a network of %u layers: each "
                 "stage needs at least one layer", S, n_layers);
        return DLB_ERR_INPUT;
    }
    if (!s->cuts[0]) {
        unsigned c = count_cuttable(n_layers, reader);
        if ((unsigned)S - 1 > c) {
            *param = which;
            size_t o = (size_t)snprintf(
                reason, len, "%d stages need %d cuts where one tensor "
                "crosses; this network has %u, before:", S, S - 1, c);
            list_cuttable(n_layers, names, reader, reason, len, o);
            return DLB_ERR_INPUT;
        }
        return DLB_OK;
    }
    int c = parse_cuts(s->cuts, n_layers, names, reader, first, reason, len);
    if (c < 0) {
        *param = MP_CUTS;
        return DLB_ERR_INPUT;
    }
    if (c + 1 != S) {
        *param = MP_CUTS;
        snprintf(reason, len, "cuts = %s makes %d stages, but %s = %d; give "
                 "one cut point fewer than stages", s->cuts, c + 1,
                 s->engine == MP_THREADS ? "stages" : "ranks", S);
        return DLB_ERR_INPUT;
    }
    return DLB_OK;
}

/* The split of costs into S runs that minimises the costliest run, by
 * dynamic programming over (stages, layers): n is at most 256. Runs begin
 * only where a cut may go; mp_cut_check made sure S of them fit. */
static void balance(unsigned n, const double *cost, const uint32_t *reader,
                    int S, unsigned *first)
{
    double best[MP_MAX_STAGES + 1][257];
    unsigned from[MP_MAX_STAGES + 1][257];
    double pre[257] = {0};
    for (unsigned i = 0; i < n; i++)
        pre[i + 1] = pre[i] + cost[i];
    for (unsigned j = 0; j <= n; j++)
        best[1][j] = pre[j], from[1][j] = 0;
    for (int s = 2; s <= S; s++)
        for (unsigned j = (unsigned)s; j <= n; j++) {
            best[s][j] = -1;
            for (unsigned i = (unsigned)s - 1; i < j; i++) {
                if (!cuttable(n, reader, i) || best[s - 1][i] < 0)
                    continue;
                double c = best[s - 1][i], last = pre[j] - pre[i];
                double worst = c > last ? c : last;
                if (best[s][j] < 0 || worst < best[s][j]) {
                    best[s][j] = worst;
                    from[s][j] = i;
                }
            }
        }
    first[S] = n;
    for (int s = S; s >= 1; s--)
        first[s - 1] = s == 1 ? 0 : from[s][first[s]];
}

dlb_status mp_cut_plan(const struct mp_settings *s, unsigned n_layers,
                       const char *const *names, const uint32_t *reader,
                       const double *cost, struct mp_cut *out, char *reason,
                       size_t len)
{
    int param = -1, S = mp_stage_count(s);
    dlb_status st = mp_cut_check(s, n_layers, names, reader, &param, reason,
                                 len);
    if (st != DLB_OK)
        return st;
    if (n_layers > 256) {
        snprintf(reason, len, "a network of %u layers: the planner takes at "
                 "most 256", n_layers);
        return DLB_ERR_UNSUPPORTED;
    }
    out->n = S;
    out->first[0] = 0;
    out->first[S] = n_layers;
    if (s->cuts[0])
        parse_cuts(s->cuts, n_layers, names, reader, out->first, reason, len);
    else
        balance(n_layers, cost, reader, S, out->first);
    out->first[S] = n_layers;
    return DLB_OK;
}

dlb_status mp_plan_model(const struct dlb_host *h, const struct dlb_model *m,
                         const struct mp_settings *s, struct mp_cut *out)
{
    const struct dlb_model_api *mo = h->model_api;
    unsigned n = mo->node_count(h, m);
    char names_buf[256][64];
    const char *names[256];
    double cost[256];
    int32_t lowest[256]; /* the earliest node each node reads; -1: input */
    uint32_t reader[256];
    char why[1024] = "";
    if (n == 0 || n > 256) {
        h->log(h, DLB_LOG_ERROR, "a network of %u layers: mp takes 1 to 256",
               n);
        return DLB_ERR_UNSUPPORTED;
    }
    for (unsigned i = 0; i < n; i++) {
        struct dlb_layer_info li;
        dlb_status st = mo->node_info(h, m, i, &li);
        if (st != DLB_OK)
            return st;
        memcpy(names_buf[i], li.name, sizeof names_buf[i]);
        names[i] = names_buf[i];
        /* Forward flops, and the activation traffic that layers without
         * arithmetic (pooling, ReLU, dropout) spend their time on. */
        cost[i] = li.flops_fwd + (double)li.out_c * li.out_h * li.out_w;
        lowest[i] = i > 0 ? (int32_t)i - 1 : -1;
        for (uint32_t j = 0; j < li.n_inputs && j < 8; j++)
            if (li.inputs[j] < lowest[i])
                lowest[i] = li.inputs[j];
    }
    /* reader[k]: the first node from k on that reads before k - 1. */
    for (unsigned k = 0; k < n; k++) {
        reader[k] = n;
        for (unsigned i = k; k > 0 && i < n && reader[k] == n; i++)
            if (lowest[i] + 1 < (int32_t)k)
                reader[k] = i;
    }
    dlb_status st = mp_cut_plan(s, n, names, reader, cost, out, why,
                                sizeof why);
    if (st != DLB_OK)
        h->log(h, DLB_LOG_ERROR, "%s", why);
    return st;
}
