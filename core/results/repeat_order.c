#include "results/repeat.h"
#include "util/rng.h"

void dlb_reps_pass_order(uint64_t seed, int round, int rep, size_t n, size_t *order)
{
    struct dlb_rng g;
    /* One stream per (round, pass): round is -1 outside a search. */
    uint64_t stream = ((uint64_t)(uint32_t)(round + 1) << 32) | (uint32_t)rep;
    dlb_rng_seed_stream(&g, seed ^ 0x9e3779b97f4a7c15ULL, stream);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n; i > 1; i--) { /* Fisher-Yates */
        size_t j = (size_t)dlb_rng_below(&g, i);
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}
