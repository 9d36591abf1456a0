/* LeNet's forward and backward pass on both sides of a pair, the way the
 * model runs it: relu and dropout in place, a flatten from pool2 into
 * fc1, max pooling with its routes. The single-op checks start every op
 * from fresh buffers; a chain hands each op the previous one's output
 * (in whatever layout or precision the backend left it), and the test
 * compares between and after the passes what its backend must match.
 * Include after backend_pair.h. */
#ifndef DLB_TEST_BACKEND_PAIR_LENET_H
#define DLB_TEST_BACKEND_PAIR_LENET_H

#include "backend_pair.h"

struct lenet_chain {
    struct dlb_conv2d_desc c1, c2;
    struct dlb_pool_desc p1, p2;
    struct dlb_dropout_desc d2, d3;
    struct dlb_linear_desc f1, f2;
    size_t a1, a2, a3, a4; /* conv1, pool1, conv2, pool2 output counts */
    struct pair x, w1, b1, w2, b2, w3, b3, w4, b4;
    struct pair y1, y2, y3, y4, y5, y6; /* conv1 ... fc2 outputs */
    struct pair ws1, ws2;               /* the pools' routes */
    struct pair g6, g5, g4, g3, g2, g1; /* g6: the loss gradient given */
    struct pair dw1, db1, dw2, db2, dw3, db3, dw4, db4;
};

/* Descriptors for batch n in type t, inputs and weights drawn from rng
 * (in this order, so that a test draws the same values as before), the
 * outputs filled with garbage. */
static void lenet_open(struct lenet_chain *c, enum dlb_dtype t, uint32_t n)
{
    c->c1 = conv_desc(n, 1, 28, 28, 10, 5, 1, 0);
    c->c2 = conv_desc(n, 10, 12, 12, 20, 5, 1, 0);
    c->p1 = (struct dlb_pool_desc){ DLB_POOL_MAX, n, 10, 24, 24, 2, 2, 2, 2,
                                    0, 0, 12, 12 };
    c->p2 = (struct dlb_pool_desc){ DLB_POOL_MAX, n, 20, 8, 8, 2, 2, 2, 2,
                                    0, 0, 4, 4 };
    c->d2 = (struct dlb_dropout_desc){ DLB_DROPOUT_CHANNEL, n, 20, 64, 0.5f,
                                       77 };
    c->d3 = (struct dlb_dropout_desc){ DLB_DROPOUT_ELEMENT, n, 50, 1, 0.5f,
                                       78 };
    c->f1 = (struct dlb_linear_desc){ n, 320, 50 };
    c->f2 = (struct dlb_linear_desc){ n, 50, 10 };
    c->a1 = (size_t)n * 5760;
    c->a2 = (size_t)n * 1440;
    c->a3 = (size_t)n * 1280;
    c->a4 = (size_t)n * 320;
    c->x = rand_pair(t, (size_t)n * 784, 1.0);
    c->w1 = rand_pair(t, 250, 0.3);
    c->b1 = rand_pair(t, 10, 0.5);
    c->w2 = rand_pair(t, 5000, 0.1);
    c->b2 = rand_pair(t, 20, 0.5);
    c->w3 = rand_pair(t, 16000, 0.1);
    c->b3 = rand_pair(t, 50, 0.5);
    c->w4 = rand_pair(t, 500, 0.3);
    c->b4 = rand_pair(t, 10, 0.5);
    c->y1 = out_pair(t, c->a1);
    c->y2 = out_pair(t, c->a2);
    c->y3 = out_pair(t, c->a3);
    c->y4 = out_pair(t, c->a4);
    c->y5 = out_pair(t, (size_t)n * 50);
    c->y6 = out_pair(t, (size_t)n * 10);
    c->ws1 = alloc_pair(DLB_S32, c->a2);
    c->ws2 = alloc_pair(DLB_S32, c->a4);
    c->g6 = rand_pair(t, (size_t)n * 10, 1.0);
    c->g5 = out_pair(t, (size_t)n * 50);
    c->g4 = out_pair(t, c->a4);
    c->g3 = out_pair(t, c->a3);
    c->g2 = out_pair(t, c->a2);
    c->g1 = out_pair(t, c->a1);
    c->dw1 = out_pair(t, 250);
    c->db1 = out_pair(t, 10);
    c->dw2 = out_pair(t, 5000);
    c->db2 = out_pair(t, 20);
    c->dw3 = out_pair(t, 16000);
    c->db3 = out_pair(t, 50);
    c->dw4 = out_pair(t, 500);
    c->db4 = out_pair(t, 10);
}

/* conv1, pool1, relu, conv2, dropout2d, pool2, relu, fc1 (after the
 * flatten), relu, dropout, fc2: the logits in y6. */
static void lenet_forward(struct lenet_chain *c)
{
    size_t n = c->c1.n;
    CALL(conv2d_fwd, &c->c1, B(c->x), B(c->w1), B(c->b1), B(c->y1));
    CALL(pool_fwd, &c->p1, B(c->y1), B(c->y2), B(c->ws1));
    CALL(relu_fwd, c->a2, B(c->y2), B(c->y2));
    CALL(conv2d_fwd, &c->c2, B(c->y2), B(c->w2), B(c->b2), B(c->y3));
    CALL(dropout_fwd, &c->d2, B(c->y3), B(c->y3));
    CALL(pool_fwd, &c->p2, B(c->y3), B(c->y4), B(c->ws2));
    CALL(relu_fwd, c->a4, B(c->y4), B(c->y4));
    CALL(linear_fwd, &c->f1, B(c->y4), B(c->w3), B(c->b3), B(c->y5));
    CALL(relu_fwd, n * 50, B(c->y5), B(c->y5));
    CALL(dropout_fwd, &c->d3, B(c->y5), B(c->y5));
    CALL(linear_fwd, &c->f2, B(c->y5), B(c->w4), B(c->b4), B(c->y6));
}

/* From the loss gradient g6 back to conv1's weight gradient (conv1 has
 * no input gradient). */
static void lenet_backward(struct lenet_chain *c)
{
    size_t n = c->c1.n;
    CALL(linear_bwd, &c->f2, B(c->y5), B(c->w4), B(c->g6), B(c->g5),
         B(c->dw4), B(c->db4));
    CALL(dropout_bwd, &c->d3, B(c->g5), B(c->g5));
    CALL(relu_bwd, n * 50, B(c->y5), B(c->g5), B(c->g5));
    CALL(linear_bwd, &c->f1, B(c->y4), B(c->w3), B(c->g5), B(c->g4),
         B(c->dw3), B(c->db3));
    CALL(relu_bwd, c->a4, B(c->y4), B(c->g4), B(c->g4));
    CALL(pool_bwd, &c->p2, B(c->g4), B(c->ws2), B(c->g3));
    CALL(dropout_bwd, &c->d2, B(c->g3), B(c->g3));
    CALL(conv2d_bwd_data, &c->c2, B(c->w2), B(c->g3), B(c->g2));
    CALL(conv2d_bwd_weights, &c->c2, B(c->y2), B(c->g3), B(c->dw2),
         B(c->db2));
    CALL(relu_bwd, c->a2, B(c->y2), B(c->g2), B(c->g2));
    CALL(pool_bwd, &c->p1, B(c->g2), B(c->ws1), B(c->g1));
    CALL(conv2d_bwd_weights, &c->c1, B(c->x), B(c->g1), B(c->dw1),
         B(c->db1));
}

static void lenet_close(struct lenet_chain *c)
{
    RELEASE(&c->x, &c->w1, &c->b1, &c->w2, &c->b2, &c->w3, &c->b3, &c->w4,
            &c->b4, &c->y1, &c->y2, &c->y3, &c->y4, &c->y5, &c->y6, &c->ws1,
            &c->ws2, &c->g6, &c->g5, &c->g4, &c->g3, &c->g2, &c->g1, &c->dw1,
            &c->db1, &c->dw2, &c->db2, &c->dw3, &c->db3, &c->dw4, &c->db4);
}

#endif
