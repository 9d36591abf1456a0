/* Engine nccl's transfers, grouped around a stage's schedule (mp.h).
 *
 * A stage receives micro-batch k's activations from s - 1 before its
 * forward of k and sends its output to s + 1 after it; it receives the
 * gradient from s + 1 before its backward of k and sends the gradient at
 * its input to s - 1 after it. NCCL transfers block their stream until
 * the peer posts the matching one, so each group pairs the send that
 * ends operation i - 1 with the receive operation i waits for: under
 * 1F1B, stage s sends activations forward while s + 1 sends gradients
 * back, and as two groups one after the other those would wait for each
 * other for ever. The messages between two stages go one way each
 * (activations up, gradients down), in micro-batch order in both
 * schedules, so NCCL's in-order matching pairs them by k. */
#include "mp.h"

static void add(struct mp_p2p_group *g, int send, int grad, unsigned k,
                int peer)
{
    g->p[g->n++] = (struct mp_p2p){(unsigned char)send, (unsigned char)grad,
                                   k, peer};
}

void mp_p2p_plan(const struct mp_op *ops, int s, int S, int M,
                 struct mp_p2p_group *groups)
{
    int n = 2 * M;
    for (int i = 0; i <= n; i++)
        groups[i].n = 0;
    for (int i = 0; i < n; i++) {
        const struct mp_op *op = &ops[i];
        if (!op->backward) {
            if (s > 0)
                add(&groups[i], 0, 0, op->k, s - 1);
            if (s < S - 1)
                add(&groups[i + 1], 1, 0, op->k, s + 1);
        } else {
            if (s < S - 1)
                add(&groups[i], 0, 1, op->k, s + 1);
            if (s > 0)
                add(&groups[i + 1], 1, 1, op->k, s - 1);
        }
    }
}
