/* A bit per item written as text: which test images a model classified
 * correctly travels in a record as a string (the record's "test_correct"),
 * so that two configurations scored on the same images can be compared
 * image by image. Item i is bit i % 8 of byte i / 8, the bytes in order,
 * two lowercase hex digits each: 10,000 images take 2,500 characters. */
#ifndef DLB_CORE_HEXBITS_H
#define DLB_CORE_HEXBITS_H

#include <stddef.h>
#include <stdint.h>

/* Bytes that hold n bits. */
static inline size_t dlb_hexbits_bytes(size_t n)
{
    return (n + 7) / 8;
}

static inline void dlb_hexbits_set(uint8_t *bits, size_t i, int on)
{
    if (on)
        bits[i / 8] |= (uint8_t)(1u << (i % 8));
    else
        bits[i / 8] &= (uint8_t)~(1u << (i % 8));
}

static inline int dlb_hexbits_get(const uint8_t *bits, size_t i)
{
    return bits[i / 8] >> (i % 8) & 1;
}

/* The text of n bits: a malloc'd string of 2 * dlb_hexbits_bytes(n)
 * digits; NULL without memory. */
char *dlb_hexbits_encode(const uint8_t *bits, size_t n);

/* The n bits of `text` into bits[dlb_hexbits_bytes(n)]: 0, or -1 when
 * the text is not exactly that many hex digit pairs, or sets a bit past
 * the n-th (a record from another test set, or damaged). */
int dlb_hexbits_decode(const char *text, size_t n, uint8_t *bits);

#endif
