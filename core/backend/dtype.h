/* Element types: sizes, names and the exact float conversions every backend
 * and the host share (bf16 and IEEE binary16 with round to nearest even). */
#ifndef DLB_CORE_DTYPE_H
#define DLB_CORE_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include <dlbench/plugin.h>

size_t dlb_dtype_size(enum dlb_dtype t);   /* bytes per element; 0 if unknown */
const char *dlb_dtype_name(enum dlb_dtype t); /* "f32", "bf16" ... */
int dlb_dtype_is_float(enum dlb_dtype t);  /* F32, F16, BF16, F64 */

/* Round to nearest, ties to even; overflow gives infinity; NaN stays a
 * (quiet) NaN with its sign. */
uint16_t dlb_f32_to_bf16(float f);
float dlb_bf16_to_f32(uint16_t h);
/* IEEE 754 binary16, with subnormals. */
uint16_t dlb_f32_to_f16(float f);
float dlb_f16_to_f32(uint16_t h);

#endif
