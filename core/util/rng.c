#include "util/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void dlb_rng_seed(struct dlb_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

void dlb_rng_seed_stream(struct dlb_rng *r, uint64_t seed, uint64_t stream)
{
    /* Mix the stream id through splitmix so nearby ids give unrelated
     * streams. */
    uint64_t x = stream;
    dlb_rng_seed(r, seed ^ splitmix64(&x));
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t dlb_rng_u64(struct dlb_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

float dlb_rng_float(struct dlb_rng *r)
{
    return (float)(dlb_rng_u64(r) >> 40) * 0x1.0p-24f;
}

double dlb_rng_double(struct dlb_rng *r)
{
    return (double)(dlb_rng_u64(r) >> 11) * 0x1.0p-53;
}

uint64_t dlb_rng_below(struct dlb_rng *r, uint64_t n)
{
    /* Rejection keeps the result unbiased for every n. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = dlb_rng_u64(r);
    while (x >= limit);
    return x % n;
}

double dlb_rng_normal(struct dlb_rng *r)
{
    double u1, u2;
    do
        u1 = dlb_rng_double(r);
    while (u1 <= 0.0);
    u2 = dlb_rng_double(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
