/* Bits as hex text (hexbits.h). */
#include "util/hexbits.h"

#include <stdlib.h>
#include <string.h>

char *dlb_hexbits_encode(const uint8_t *bits, size_t n)
{
    static const char digit[] = "0123456789abcdef";
    size_t nb = dlb_hexbits_bytes(n);
    char *s = malloc(2 * nb + 1);
    if (!s)
        return NULL;
    for (size_t i = 0; i < nb; i++) {
        s[2 * i] = digit[bits[i] >> 4];
        s[2 * i + 1] = digit[bits[i] & 15];
    }
    s[2 * nb] = '\0';
    return s;
}

static int value(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int dlb_hexbits_decode(const char *text, size_t n, uint8_t *bits)
{
    size_t nb = dlb_hexbits_bytes(n);
    if (!text || strlen(text) != 2 * nb)
        return -1;
    for (size_t i = 0; i < nb; i++) {
        int hi = value(text[2 * i]), lo = value(text[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        bits[i] = (uint8_t)(hi << 4 | lo);
    }
    /* the last byte's unused bits are zero in what encode writes */
    if (n % 8 && nb && bits[nb - 1] >> (n % 8))
        return -1;
    return 0;
}
