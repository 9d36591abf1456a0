/* What to prune, from the weights alone: pure functions, tested without
 * a model (tests/unit/test_prune_rank.c). */
#ifndef DLB_PRUNE_RANK_H
#define DLB_PRUNE_RANK_H

#include <stddef.h>
#include <stdint.h>

/* How many of `n` items a fraction in [0, 1) removes: round to nearest,
 * at most n - 1 when `keep_one` (a layer keeps a unit). */
size_t dlb_prune_count(double fraction, size_t n, int keep_one);

/* Unstructured magnitude pruning over `n_t` tensors together: mask[t][k]
 * = 0 for exactly dlb_prune_count(sparsity, total, 0) weights of the
 * smallest |w| over all tensors (per-layer pruning: call it with one
 * tensor), ties broken by tensor then index, else 1. Returns the number
 * of zeros set, or (size_t)-1 when out of memory. */
size_t dlb_prune_magnitude(const float *const *w, const size_t *n,
                           unsigned n_t, double sparsity, uint8_t *const *mask);

enum dlb_prune_norm { DLB_PRUNE_NORM_L1, DLB_PRUNE_NORM_L2 };

/* Structured pruning of one layer: w holds `units` rows of `per_unit`
 * weights (a conv filter [in][kh][kw] or a linear unit's [in]); the
 * dlb_prune_count(fraction, units, 1) rows of smallest L1 or L2 norm are
 * removed, ties broken by index. keep[] (units entries of room) receives
 * the others in ascending order; returns how many, 0 when out of memory. */
uint32_t dlb_prune_rank_units(const float *w, uint32_t units, size_t per_unit,
                              enum dlb_prune_norm norm, double fraction,
                              uint32_t *keep);

/* The same over a group of layers that keep the same units (their outputs
 * meet at an add): unit u's norm is that of rows u of every member
 * together (w[g] holds `units` rows of per_unit[g] weights), so that a
 * channel the sum needs from any member stays. */
uint32_t dlb_prune_rank_group(const float *const *w, const size_t *per_unit,
                              unsigned n_members, uint32_t units,
                              enum dlb_prune_norm norm, double fraction,
                              uint32_t *keep);

#endif
