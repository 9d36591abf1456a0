/* The probe's compute units by number (struct dlb_peak keeps them as named
 * fields, which callers read directly). */
#include "peak_impl.h"

#include <stddef.h>
#include <stdio.h>

const struct dlb_peak_unit_desc dlb_peak_units[DLB_PEAK_NUNITS] = {
    [DLB_PEAK_FP32] = {"fp32", NULL, "gflops", "gflops_1t"},
    [DLB_PEAK_BF16] = {"bf16", "avx512_bf16", "gflops", "gflops_1t"},
    [DLB_PEAK_FP16] = {"fp16", "avx512_fp16", "gflops", "gflops_1t"},
    [DLB_PEAK_VNNI] = {"vnni", "avx512_vnni", "gops", "gops_1t"},
    [DLB_PEAK_AMX_BF16] = {"amx_bf16", "amx_bf16", "gflops", "gflops_1t"},
    [DLB_PEAK_AMX_INT8] = {"amx_int8", "amx_int8", "gops", "gops_1t"},
};

/* Where each unit's figures sit in struct dlb_peak. */
#define DLB_AT(all, one, isa)                                              \
    {offsetof(struct dlb_peak, all), offsetof(struct dlb_peak, one),       \
     offsetof(struct dlb_peak, isa), sizeof ((struct dlb_peak *)0)->isa}

static const struct {
    size_t all, one, isa, isa_size;
} layout[DLB_PEAK_NUNITS] = {
    [DLB_PEAK_FP32] = DLB_AT(fp32_gflops, fp32_gflops_1t, fp32_isa),
    [DLB_PEAK_BF16] = DLB_AT(bf16_gflops, bf16_gflops_1t, bf16_isa),
    [DLB_PEAK_FP16] = DLB_AT(fp16_gflops, fp16_gflops_1t, fp16_isa),
    [DLB_PEAK_VNNI] = DLB_AT(vnni_gops, vnni_gops_1t, vnni_isa),
    [DLB_PEAK_AMX_BF16] = DLB_AT(amx_bf16_gflops, amx_bf16_gflops_1t,
                                 amx_bf16_isa),
    [DLB_PEAK_AMX_INT8] = DLB_AT(amx_int8_gops, amx_int8_gops_1t,
                                 amx_int8_isa),
};

double dlb_peak_figure(const struct dlb_peak *p, enum dlb_peak_unit u,
                       int one_thread)
{
    const char *base = (const char *)p;
    return *(const double *)(base + (one_thread ? layout[u].one
                                                : layout[u].all));
}

const char *dlb_peak_isa(const struct dlb_peak *p, enum dlb_peak_unit u)
{
    return (const char *)p + layout[u].isa;
}

void dlb_peak_set(struct dlb_peak *p, enum dlb_peak_unit u, double all,
                  double one, const char *isa)
{
    char *base = (char *)p;
    *(double *)(base + layout[u].all) = all;
    *(double *)(base + layout[u].one) = one;
    snprintf(base + layout[u].isa, layout[u].isa_size, "%s", isa);
}
