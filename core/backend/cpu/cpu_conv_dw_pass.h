/* The passes of the own 1x1-and-depthwise kernels over the expanded
 * rows, written once for both (cpu_conv_dw_f32.c, cpu_conv_dw_bf16.c):
 * included by each after cpu_conv_dw_simd.h and its own definitions of
 *   DW_ARGS   the arguments' struct (x, w1, b1, w2, b2, y and the sizes),
 *   DW_ELEM   the type of x, the weights and y,
 *   expand_block(acc, xp, wp, wstride, ni, P, B)
 *             one input block's share of a 1x1 tile's sums (ni of its
 *             16 channels real),
 *   ring16(v) the expanded tensor as the ring keeps it (f32),
 *   load_w16(p), store_y16(p, v)
 *             16 depthwise weights as f32, and 16 outputs from f32.
 * Every function here is static: each file gets its own copy, compiled
 * for its own target.
 *
 * Work is (channel group, output row) units, channel-group major, cut
 * into one contiguous range per thread: a thread recomputes at most a
 * row or two of the expansion where its range starts inside a group. */

/* P pixels x B blocks of one expanded row from p0: the 1x1 convolution
 * over every input block, bias, activation, into the ring row `out`
 * ([B][iw + 2][16], pixel p at p + 1). Constant P and B unroll it. */
AVX512 INLINE void expand_tile(const DW_ARGS *a, const DW_ELEM *xrow, int ob0,
                               int p0, int P, int B, float *out, size_t ldo)
{
    __m512 acc[TILE_P][GROUP];
    const size_t plane = (size_t)a->ih * a->iw * 16;
    const size_t wstride = (size_t)a->icb * 256;
    UNROLL for (int b = 0; b < B; b++) {
        __m512 bb = bias16(a->b1, ob0 + b, a->oc);
        UNROLL for (int p = 0; p < P; p++)
            acc[p][b] = bb;
    }
    for (int ib = 0; ib < a->icb; ib++) {
        const int ni = a->ic - ib * 16 < 16 ? a->ic - ib * 16 : 16;
        expand_block(acc, xrow + ib * plane + (size_t)p0 * 16,
                     a->w1 + ((size_t)ob0 * a->icb + ib) * 256, wstride, ni,
                     P, B);
    }
    const __m512 lo = _mm512_set1_ps(a->lo1), hi = _mm512_set1_ps(a->hi1);
    UNROLL for (int b = 0; b < B; b++)
        UNROLL for (int p = 0; p < P; p++)
            _mm512_store_ps(out + b * ldo + (size_t)(p0 + p + 1) * 16,
                            ring16(act(acc[p][b], lo, hi)));
}

#define EXPAND_CASE(P, B)                                                   \
    case (P) * 4 + (B):                                                     \
        expand_tile(a, xrow, ob0, p0, P, B, out, ldo);                      \
        break;
#define EXPAND_P(P) EXPAND_CASE(P, 1) EXPAND_CASE(P, 2) EXPAND_CASE(P, 3)

/* Expanded row `row` of image `img`, blocks ob0 .. ob0 + B - 1. */
AVX512 static void expand_row(const DW_ARGS *a, int img, int row,
                              int ob0, int B, float *out)
{
    const size_t ldo = (size_t)(a->iw + 2) * 16;
    const DW_ELEM *xrow = a->x + (((size_t)img * a->icb) * a->ih + row) *
                                     a->iw * 16;
    for (int p0 = 0; p0 < a->iw; p0 += TILE_P) {
        int P = a->iw - p0 < TILE_P ? a->iw - p0 : TILE_P;
        switch (P * 4 + B) {
            EXPAND_P(1) EXPAND_P(2) EXPAND_P(3) EXPAND_P(4)
            EXPAND_P(5) EXPAND_P(6) EXPAND_P(7) EXPAND_P(8)
        }
    }
}

/* Q output pixels from q0 of one block's output row: the taps of the
 * ring rows `in` (NULL: padding) in registers. Constant Q and stride
 * unroll it; at stride 1 each input pixel is loaded once for the three
 * outputs it feeds (Q + 2 loads a row, not 3Q). */
AVX512 INLINE void depthwise_tile(const float *const in[3], const __m512 w[9],
                                  __m512 bb, __m512 lo, __m512 hi, int s,
                                  int q0, int Q, DW_ELEM *y)
{
    __m512 acc[8];
    UNROLL for (int q = 0; q < Q; q++)
        acc[q] = bb;
    UNROLL for (int kh = 0; kh < 3; kh++) {
        if (!in[kh])
            continue;
        if (s == 1) {
            __m512 v[10];
            UNROLL for (int j = 0; j < Q + 2; j++)
                v[j] = _mm512_load_ps(in[kh] + (size_t)(q0 + j) * 16);
            UNROLL for (int kw = 0; kw < 3; kw++)
                UNROLL for (int q = 0; q < Q; q++)
                    acc[q] = _mm512_fmadd_ps(v[q + kw], w[kh * 3 + kw], acc[q]);
            continue;
        }
        UNROLL for (int kw = 0; kw < 3; kw++)
            UNROLL for (int q = 0; q < Q; q++)
                acc[q] = _mm512_fmadd_ps(
                    _mm512_load_ps(in[kh] + (size_t)((q0 + q) * s + kw) * 16),
                    w[kh * 3 + kw], acc[q]);
    }
    UNROLL for (int q = 0; q < Q; q++)
        store_y16(y + (size_t)(q0 + q) * 16, act(acc[q], lo, hi));
}

#define DW_CASE(Q)                                                          \
    case Q:                                                                 \
        depthwise_tile(in, w, bb, lo, hi, s, q0, Q, y);                     \
        break;

/* One block's output row in tiles of T pixels and the rest, stride s:
 * at stride 1 a tile of 6 (6 sums, 8 pixels loaded, 9 weights: no
 * spills), at stride 2 of 8. */
AVX512 INLINE void depthwise_tiles(const float *const in[3], const __m512 w[9],
                                   __m512 bb, __m512 lo, __m512 hi, int s,
                                   int ow, DW_ELEM *y)
{
    const int T = s == 1 ? 6 : 8;
    int q0 = 0;
    for (; q0 + T <= ow; q0 += T)
        depthwise_tile(in, w, bb, lo, hi, s, q0, T, y);
    switch (ow - q0) {
        DW_CASE(7) DW_CASE(6) DW_CASE(5) DW_CASE(4) DW_CASE(3) DW_CASE(2)
        DW_CASE(1)
    default: break;
    }
}

/* Output row `r` of blocks ob0 .. ob0 + B - 1 from the ring rows `rows`
 * (the input rows r * stride - 1 .. + 1; NULL where that row is the
 * padding). */
AVX512 static void depthwise_row(const DW_ARGS *a, int img, int r,
                                 int ob0, int B, float *const rows[3])
{
    const size_t ldo = (size_t)(a->iw + 2) * 16;
    const int s = a->stride, ow = a->ow;
    const __m512 lo = _mm512_set1_ps(a->lo2), hi = _mm512_set1_ps(a->hi2);
    for (int b = 0; b < B; b++) {
        const int ob = ob0 + b;
        __m512 w[9];
        for (int k = 0; k < 9; k++)
            w[k] = load_w16(a->w2 + ((size_t)ob * 9 + k) * 16);
        const __m512 bb = bias16(a->b2, ob, a->oc);
        DW_ELEM *y = a->y + ((((size_t)img * a->ocb + ob) * a->oh + r) * ow) * 16;
        const float *in[3];
        for (int kh = 0; kh < 3; kh++)
            in[kh] = rows[kh] ? rows[kh] + b * ldo : NULL;
        if (s == 1)
            depthwise_tiles(in, w, bb, lo, hi, 1, ow, y);
        else
            depthwise_tiles(in, w, bb, lo, hi, 2, ow, y);
    }
}

/* Output rows [r0, r1) of image img, blocks ob0 .. ob0 + B - 1, through
 * the ring of three expanded rows. */
AVX512 static void segment(const DW_ARGS *a, int img, int ob0,
                           int B, int r0, int r1, float *ring)
{
    const size_t row_floats = (size_t)GROUP * (a->iw + 2) * 16;
    int have = -2; /* the last expanded row in the ring */
    /* the padding pixels on either side of every ring row */
    for (int k = 0; k < 3; k++)
        for (int b = 0; b < B; b++) {
            float *rb = ring + k * row_floats + (size_t)b * (a->iw + 2) * 16;
            _mm512_store_ps(rb, _mm512_setzero_ps());
            _mm512_store_ps(rb + (size_t)(a->iw + 1) * 16, _mm512_setzero_ps());
        }
    for (int r = r0; r < r1; r++) {
        int top = r * a->stride - 1;
        float *rows[3];
        for (int kh = 0; kh < 3; kh++) {
            int ir = top + kh;
            if (ir < 0 || ir >= a->ih) {
                rows[kh] = NULL;
                continue;
            }
            rows[kh] = ring + (size_t)(ir % 3) * row_floats;
            if (ir > have || have - ir >= 3) {
                expand_row(a, img, ir, ob0, B, rows[kh]);
                have = ir;
            }
        }
        depthwise_row(a, img, r, ob0, B, rows);
    }
}

AVX512 static void run_thread(const DW_ARGS *a, int t, int nt,
                              float *ring)
{
    const int groups = (a->ocb + GROUP - 1) / GROUP;
    const long units = (long)a->n * groups * a->oh;
    long u = units * t / nt, end = units * (t + 1) / nt;
    while (u < end) {
        long seg = u / a->oh; /* (image, group) */
        int r0 = (int)(u % a->oh);
        int r1 = end - (u - r0) < a->oh ? (int)(end - (u - r0)) : a->oh;
        int img = (int)(seg / groups), g = (int)(seg % groups);
        int ob0 = g * GROUP;
        int B = a->ocb - ob0 < GROUP ? a->ocb - ob0 : GROUP;
        segment(a, img, ob0, B, r0, r1, ring);
        u += r1 - r0;
    }
}

/* Floats of ring buffer one thread uses (64-byte multiples). */
static size_t dw_ring_floats(const DW_ARGS *a)
{
    /* 3 rows, aligned to 64 bytes per thread */
    return (size_t)3 * GROUP * (a->iw + 2) * 16;
}

static void dw_run(const DW_ARGS *a, float *ring, int threads)
{
    const size_t per = dw_ring_floats(a);
    const long units = (long)a->n * ((a->ocb + GROUP - 1) / GROUP) * a->oh;
    if (threads > units)
        threads = (int)units;
    if (threads < 1)
        threads = 1;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
    run_thread(a, omp_get_thread_num(), omp_get_num_threads(),
               ring + per * (size_t)omp_get_thread_num());
#else
    run_thread(a, 0, 1, ring);
#endif
}
