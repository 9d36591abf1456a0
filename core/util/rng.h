/* Seeded pseudo-random numbers (xoshiro256**, seeded through splitmix64):
 * the same seed gives the same stream on every machine, so initialisation,
 * dropout, shuffling and augmentation are reproducible. */
#ifndef DLB_CORE_RNG_H
#define DLB_CORE_RNG_H

#include <stdint.h>

struct dlb_rng {
    uint64_t s[4];
};

void dlb_rng_seed(struct dlb_rng *r, uint64_t seed);
/* An independent stream for `stream` (e.g. a layer index or worker id). */
void dlb_rng_seed_stream(struct dlb_rng *r, uint64_t seed, uint64_t stream);
uint64_t dlb_rng_u64(struct dlb_rng *r);
/* Uniform in [0, 1) with 24 bits (float) or 53 bits (double). */
float dlb_rng_float(struct dlb_rng *r);
double dlb_rng_double(struct dlb_rng *r);
/* Uniform integer in [0, n), unbiased. */
uint64_t dlb_rng_below(struct dlb_rng *r, uint64_t n);
/* Standard normal (Box-Muller). */
double dlb_rng_normal(struct dlb_rng *r);

#endif
