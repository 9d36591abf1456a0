/* The probe's compute units by number (struct dlb_peak keeps them as named
 * fields, which callers read directly), and which unit a precision's
 * kernels run on. */
#include "peak/peak_impl.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

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

/* u's figure when it was measured, else 0 */
static double measured(const struct dlb_peak *p, enum dlb_peak_unit u,
                       const char **unit)
{
    double v = dlb_peak_figure(p, u, 0);
    if (strcmp(dlb_peak_isa(p, u), "none") == 0 || !(v > 0))
        return 0;
    *unit = dlb_peak_isa(p, u);
    return v;
}

double dlb_peak_unit_gflops(const struct dlb_peak *p, const char *precision,
                            const char **unit)
{
    /* the units a precision's kernels run on, the best first */
    static const struct {
        const char *precision;
        enum dlb_peak_unit u[2];
        int n;
    } route[] = {
        {"fp32", {DLB_PEAK_FP32}, 1},
        {"bf16", {DLB_PEAK_AMX_BF16, DLB_PEAK_BF16}, 2},
        {"fp16", {DLB_PEAK_FP16}, 1},
        {"int8", {DLB_PEAK_AMX_INT8, DLB_PEAK_VNNI}, 2},
    };
    const char *name = "none";
    double v = 0;
    for (size_t i = 0; p && precision && i < sizeof route / sizeof route[0];
         i++) {
        if (strcmp(route[i].precision, precision) != 0)
            continue;
        for (int k = 0; k < route[i].n && v == 0; k++)
            v = measured(p, route[i].u[k], &name);
        break;
    }
    if (unit)
        *unit = name;
    return v;
}

void dlb_peak_for_threads(const struct dlb_peak *p, int threads,
                          struct dlb_peak *out)
{
    *out = *p;
    if (threads <= 0 || threads == p->threads)
        return;
    /* Compute units scale with the cores that run them (the probe
     * measures it: its figures are contended below 70% of linear and
     * then not kept), so one thread's figure times the count. */
    for (int u = 0; u < DLB_PEAK_NUNITS; u++) {
        double one = dlb_peak_figure(p, (enum dlb_peak_unit)u, 1);
        if (one > 0)
            dlb_peak_set(out, (enum dlb_peak_unit)u, one * threads, one,
                         dlb_peak_isa(p, (enum dlb_peak_unit)u));
    }
    out->threads = threads;
}
