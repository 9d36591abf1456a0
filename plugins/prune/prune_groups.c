/* The groups of filter pruning on a graph (prune_groups.h): one pass over
 * the layers in order, the source group of every activation followed,
 * the groups that meet at an add merged (union-find over layer indices). */
#include "prune_groups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sources of an activation that are no conv or linear layer. */
#define SRC_INPUT (-1) /* the network's input */
#define SRC_MIXED (-2) /* a concat's output: several groups side by side */

int prune_is_depthwise(const struct dlb_layer_info *li)
{
    return li->kind == DLB_LAYER_CONV && li->groups > 1 &&
           li->groups == li->in_c && li->out_c == li->in_c;
}

static int weighted(enum dlb_layer_kind k)
{
    return k == DLB_LAYER_CONV || k == DLB_LAYER_LINEAR;
}

static int root(int *parent, int g)
{
    while (parent[g] != g)
        g = parent[g] = parent[parent[g]];
    return g;
}

/* Group `src` cannot be pruned, for the first reason found. */
static void refuse(struct prune_groups *out, int *parent, int src,
                   const char *why, const char *layer)
{
    if (src < 0)
        return;
    int r = root(parent, src);
    if (!out->why[r][0])
        snprintf(out->why[r], sizeof out->why[r], why, layer);
}

static void merge(struct prune_groups *out, int *parent, int a, int b)
{
    int ra = root(parent, a), rb = root(parent, b);
    if (ra == rb)
        return;
    if (rb < ra) { /* the earlier layer stays the root */
        int t = ra;
        ra = rb;
        rb = t;
    }
    parent[rb] = ra;
    if (!out->why[ra][0])
        memcpy(out->why[ra], out->why[rb], sizeof out->why[ra]);
}

/* An add: its inputs' groups become one, or are refused when an input is
 * the network's or a concat's. */
static int add_sources(struct prune_groups *out, int *parent, const int *src,
                       const struct dlb_layer_info *L)
{
    int first = -3, input = 0, mixed = 0;
    for (uint32_t k = 0; k < L->n_inputs; k++) {
        int s = src[L->inputs[k] + 1];
        input |= s == SRC_INPUT;
        mixed |= s == SRC_MIXED;
        if (s >= 0 && first >= 0)
            merge(out, parent, first, s);
        else if (s >= 0)
            first = s;
    }
    if (input)
        refuse(out, parent, first, "its channels meet the network's input "
               "at add '%s'", L->name);
    if (mixed)
        refuse(out, parent, first, "its channels meet a concat's at add "
               "'%s'", L->name);
    return input ? SRC_INPUT : mixed ? SRC_MIXED : first;
}

int prune_groups_find(const struct dlb_layer_info *li, unsigned n,
                      struct prune_groups *out)
{
    int *parent = malloc((n ? n : 1) * sizeof *parent);
    int *src = malloc((n + 1) * sizeof *src);
    char msg[160];
    memset(out, 0, sizeof *out);
    out->group = malloc((n ? n : 1) * sizeof *out->group);
    out->why = calloc(n ? n : 1, sizeof *out->why);
    out->n = n;
    if (!parent || !src || !out->group || !out->why) {
        free(parent);
        free(src);
        prune_groups_free(out);
        return 0;
    }
    src[0] = SRC_INPUT;
    for (unsigned i = 0; i < n; i++) {
        const struct dlb_layer_info *L = &li[i];
        int a = L->n_inputs ? src[L->inputs[0] + 1] : src[i];
        parent[i] = (int)i;
        src[i + 1] = a;
        if (L->kind == DLB_LAYER_CONV && L->groups > 1 &&
            !prune_is_depthwise(L)) {
            snprintf(msg, sizeof msg, "its channels reach grouped conv '%%s' "
                     "(groups = %u), whose groups would change", L->groups);
            refuse(out, parent, a, msg, L->name);
            snprintf(msg, sizeof msg, "it is grouped conv '%%s' (groups = "
                     "%u), whose groups would change", L->groups);
            refuse(out, parent, (int)i, msg, L->name);
        }
        if (weighted(L->kind) && !prune_is_depthwise(L))
            src[i + 1] = (int)i;
        else if (L->kind == DLB_LAYER_ADD)
            src[i + 1] = add_sources(out, parent, src, L);
        else if (L->kind == DLB_LAYER_CONCAT) {
            for (uint32_t k = 0; k < L->n_inputs; k++)
                refuse(out, parent, src[L->inputs[k] + 1], "its channels "
                       "reach concat '%s', whose offsets are not followed",
                       L->name);
            src[i + 1] = SRC_MIXED;
        } else if (L->kind == DLB_LAYER_LOGSOFTMAX)
            refuse(out, parent, a, "it gives the class scores (through "
                   "'%s')", L->name);
    }
    if (n)
        refuse(out, parent, src[n], "it gives the network's output ('%s')",
               li[n - 1].name);
    for (unsigned i = 0; i < n; i++) {
        int w = weighted(li[i].kind) && !prune_is_depthwise(&li[i]);
        out->group[i] = w ? root(parent, (int)i) : -1;
    }
    for (unsigned i = 0; i < n; i++)
        if (out->group[i] >= 0 && out->group[i] != (int)i)
            memcpy(out->why[i], out->why[out->group[i]], sizeof out->why[i]);
    free(parent);
    free(src);
    return 1;
}

void prune_groups_free(struct prune_groups *g)
{
    free(g->group);
    free(g->why);
    memset(g, 0, sizeof *g);
}
