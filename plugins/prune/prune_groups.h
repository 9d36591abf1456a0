/* Filter pruning on a graph: which conv and linear layers must lose the
 * same units, and which cannot lose any, with the reason. A pure function
 * of the layer descriptions (tests/unit/test_prune_rank.c feeds it
 * crafted graphs).
 *
 * The channels of an activation come from the last conv or linear layer
 * before it that is not depthwise (batch norm, ReLU, pooling, dropout,
 * flatten and a depthwise conv keep them channel for channel). An add
 * sums its inputs channel by channel, so the layers its inputs come from
 * form one group: they keep the same units (ranked on all of them
 * together), and every later reader of the sum loses the same inputs.
 * A group cannot be pruned when its channels meet the network's input at
 * an add, reach a concat or a grouped (not depthwise) conv, or reach the
 * network's output without another conv or linear layer between (the
 * class scores). */
#ifndef DLB_PRUNE_GROUPS_H
#define DLB_PRUNE_GROUPS_H

#include <dlbench/model_api.h>

/* Per layer: group[i] is the group of conv or linear layer i (an id below
 * n), -1 for the other layers and depthwise convs; why[g] is "" when
 * group g can be pruned, else the reason. */
struct prune_groups {
    int *group;
    char (*why)[160];
    unsigned n;
};

/* Work out the groups of the n layers li[]; 0 when out of memory. */
int prune_groups_find(const struct dlb_layer_info *li, unsigned n,
                      struct prune_groups *out);
void prune_groups_free(struct prune_groups *g);

/* 1 when layer li is a depthwise conv: one input channel per filter, its
 * own. */
int prune_is_depthwise(const struct dlb_layer_info *li);

#endif
