/* The prune plugin's figures: the network's size before and after, zeros
 * counted on the model's weights, units removed, accuracy at each stage.
 * Every figure is read back from the model, not derived from what was
 * asked, so that the nominal and the measured can be compared. */
#include <stdlib.h>

#include "prune.h"

dlb_status prune_read_net(const struct dlb_host *h, struct dlb_model *m,
                          struct prune_net *net, struct prune_totals *t)
{
    const struct dlb_model_api *mo = h->model_api;
    free(net->li);
    net->n = mo->node_count(h, m);
    net->li = calloc(net->n ? net->n : 1, sizeof *net->li);
    if (!net->li)
        return DLB_ERR_NOMEM;
    t->params = t->flops = 0;
    for (unsigned i = 0; i < net->n; i++) {
        dlb_status s = mo->node_info(h, m, i, &net->li[i]);
        if (s != DLB_OK)
            return s;
        t->params += (double)net->li[i].params;
        t->flops += net->li[i].flops_fwd;
    }
    return DLB_OK;
}

/* Zeros in the selected layers' weights, counted on the model, and how
 * many weights and output units (CSR rows) they have. */
static dlb_status count_zeros(const struct dlb_host *h, struct dlb_model *m,
                              const struct prune_net *net, const unsigned *sel,
                              unsigned n, double *zeros, double *weights,
                              double *rows)
{
    *zeros = *weights = *rows = 0;
    for (unsigned k = 0; k < n; k++) {
        const struct dlb_layer_info *li = &net->li[sel[k]];
        float *w = malloc(li->weight_count * sizeof *w + 1);
        if (!w)
            return DLB_ERR_NOMEM;
        dlb_status s = h->model_api->tensor_io(h, m, (unsigned)li->weight_id,
                                               DLB_TENSOR_VALUE, w,
                                               li->weight_count, 0);
        for (size_t i = 0; s == DLB_OK && i < li->weight_count; i++)
            *zeros += w[i] == 0.0f;
        free(w);
        if (s != DLB_OK)
            return s;
        *weights += (double)li->weight_count;
        *rows += li->out_c;
    }
    return DLB_OK;
}

dlb_status prune_accuracy(const struct dlb_host *h, struct dlb_model *m,
                          const char *name, double *acc)
{
    double loss = 0.0;
    dlb_status s = h->model_api->evaluate(h, m, &loss, acc);
    return s == DLB_OK ? h->metric(h, name, "%", *acc) : s;
}

/* Structured: units and weights of the selected layers before and after,
 * read from the model's shapes. */
void prune_removal_figures(const struct dlb_host *h,
                           const struct prune_net *was,
                           const struct prune_net *now, const unsigned *sel,
                           unsigned n)
{
    double u0 = 0, u1 = 0, w0 = 0, w1 = 0;
    for (unsigned k = 0; k < n; k++) {
        u0 += was->li[sel[k]].out_c;
        u1 += now->li[sel[k]].out_c;
        w0 += (double)was->li[sel[k]].weight_count;
        w1 += (double)now->li[sel[k]].weight_count;
    }
    h->metric(h, "units_targeted", "units", u0);
    h->metric(h, "units_removed", "units", u0 - u1);
    h->metric(h, "sparsity_measured", "fraction", u0 > 0 ? (u0 - u1) / u0 : 0);
    h->metric(h, "weights_removed_fraction", "fraction",
              w0 > 0 ? (w0 - w1) / w0 : 0);
}

/* Zeros, parameters, size and FLOPs after pruning (and fine-tuning). */
dlb_status prune_after_figures(const struct prune_state *s,
                               const struct dlb_host *h, struct dlb_model *m,
                               const struct prune_net *net,
                               const unsigned *sel,
                               unsigned n, const struct prune_totals *after)
{
    double zeros, weights, rows;
    dlb_status st = count_zeros(h, m, net, sel, n, &zeros, &weights, &rows);
    if (st != DLB_OK)
        return st;
    h->metric(h, "weights_targeted", "weights", weights);
    h->metric(h, "zeros_counted", "weights", zeros);
    if (!prune_structured(s))
        h->metric(h, "sparsity_measured", "fraction",
                  weights > 0 ? zeros / weights : 0);
    h->metric(h, "params_after", "", after->params);
    h->metric(h, "nonzero_params_after", "", after->params - zeros);
    h->metric(h, "size_after_bytes", "bytes", 4 * after->params);
    /* What the pruned tensors would take as CSR (fp32 values, 32-bit
     * column indices and row pointers): the size a sparse format saves,
     * which a dense checkpoint of a masked model does not. */
    if (!prune_structured(s))
        h->metric(h, "size_csr_bytes", "bytes",
                  4 * (after->params - weights) + 8 * (weights - zeros) +
                      4 * (rows + n));
    return h->metric(h, "flops_after", "FLOP", after->flops);
}
