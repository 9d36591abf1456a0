/* What the oneDNN this build uses does with the low-precision types on
 * this CPU: the forward convolution (inference) of a few of the reference
 * networks' layers timed in f32, bf16 and f16, each with the kernel
 * oneDNN picks (layouts its choice). The question it answers is whether a
 * type pays, not only whether a kernel exists (bench_onednn_kernels):
 * oneDNN 3.2 on a Sapphire Rapids has f16 forward kernels for
 * AVX512_FP16, and they are slower than its f32 ones (doc/performance.md,
 * "fp16 on the cpu backend"), so the cpu backend offers no fp16.
 * Median of 7 runs of 0.3 s each per layer and type; run it alone on a
 * quiet machine. A type without a kernel prints "-".
 *
 *   OMP_NUM_THREADS=2 bench_onednn_lowp     (make bench builds it) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl_debug.h> /* dnnl_dt2str */

#include "backend/cpu/cpu_dnnl_api.h"
#include "stats/measure.h" /* dlb_now */

struct layer {
    const char *name;
    int n, ic, oc, hw, k, stride, groups;
};

static const struct layer layers[] = {
    { "resnet50 3x3 64->64 56x56", 32, 64, 64, 56, 3, 1, 1 },
    { "resnet50 3x3 64->64 56x56", 1, 64, 64, 56, 3, 1, 1 },
    { "resnet50 1x1 256->64 56x56", 32, 256, 64, 56, 1, 1, 1 },
    { "mobilenetv2 1x1 24->144 56x56", 1, 24, 144, 56, 1, 1, 1 },
    { "mobilenetv2 dw 144 56x56", 32, 144, 144, 56, 3, 1, 144 },
};

/* Every element a small value of type dt, varied, never zero. */
static void fill(dnnl_memory_t m, dnnl_data_type_t dt)
{
    void *p = NULL;
    size_t bytes = dlb_dnnl_memory_size(m);
    if (dnnl_memory_get_data_handle(m, &p) != dnnl_success || !p)
        return;
    if (dt == dnnl_f32) {
        for (size_t i = 0; i < bytes / 4; i++)
            ((float *)p)[i] = 0.25f + (float)(i % 17) / 64.0f;
    } else { /* 0.25 to about 0.5: bf16 0x3e80.., f16 0x3400.. */
        uint16_t base = dt == dnnl_bf16 ? 0x3e80 : 0x3400;
        for (size_t i = 0; i < bytes / 2; i++)
            ((uint16_t *)p)[i] = (uint16_t)(base + i % 17);
    }
}

/* Seconds a call of L's forward convolution in dt, -1 without a kernel;
 * the implementation's name in impl. */
static double time_layer(dnnl_engine_t e, dnnl_stream_t s,
                         const struct layer *L, dnnl_data_type_t dt,
                         char *impl, size_t len)
{
    int pad = L->k / 2, oh = (L->hw + 2 * pad - L->k) / L->stride + 1;
    dnnl_dims_t xd = { L->n, L->ic, L->hw, L->hw };
    dnnl_dims_t yd = { L->n, L->oc, oh, oh };
    dnnl_dims_t wd = { L->groups, L->oc / L->groups, L->ic / L->groups, L->k,
                       L->k };
    dnnl_dims_t wd1 = { L->oc, L->ic, L->k, L->k };
    dnnl_dims_t st = { L->stride, L->stride }, pd_lr = { pad, pad };
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t prim = NULL;
    dnnl_memory_t mem[3] = { NULL, NULL, NULL };
    dlb_dnnl_md x, w, y, md;
    const char *name = "-";
    double best = -1;
    dlb_dnnl_md_tag(&x, 4, xd, dt, dnnl_format_tag_any);
    dlb_dnnl_md_tag(&y, 4, yd, dt, dnnl_format_tag_any);
    if (L->groups > 1)
        dlb_dnnl_md_tag(&w, 5, wd, dt, dnnl_format_tag_any);
    else
        dlb_dnnl_md_tag(&w, 4, wd1, dt, dnnl_format_tag_any);
    snprintf(impl, len, "-");
    if (dlb_dnnl_conv_fwd_pd(&pd, e, dnnl_forward_inference,
                             dnnl_convolution_direct, &x, &w, NULL, &y, st,
                             pd_lr, pd_lr, NULL) != dnnl_success)
        return -1;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name);
    snprintf(impl, len, "%s", name);
    static const dnnl_query_t what[3] = { dnnl_query_src_md,
                                          dnnl_query_weights_md,
                                          dnnl_query_dst_md };
    int ok = dnnl_primitive_create(&prim, pd) == dnnl_success;
    for (int i = 0; ok && i < 3; i++) {
        ok = dlb_dnnl_pd_md(&md, pd, what[i]) == dnnl_success &&
             dlb_dnnl_memory_create(&mem[i], &md, e, DNNL_MEMORY_ALLOCATE) ==
                 dnnl_success;
        if (ok)
            fill(mem[i], dt);
    }
    dnnl_exec_arg_t args[3] = { { DNNL_ARG_SRC, mem[0] },
                                { DNNL_ARG_WEIGHTS, mem[1] },
                                { DNNL_ARG_DST, mem[2] } };
    double runs[7];
    for (int r = -1; ok && r < 7; r++) { /* r = -1: warm-up */
        double t0 = dlb_now(), el;
        long calls = 0;
        do {
            ok = dnnl_primitive_execute(prim, s, 3, args) == dnnl_success &&
                 dnnl_stream_wait(s) == dnnl_success;
            calls++;
            el = dlb_now() - t0;
        } while (ok && el < 0.3);
        if (r >= 0)
            runs[r] = el / (double)calls;
    }
    if (ok) { /* the median of 7 */
        for (int i = 1; i < 7; i++)
            for (int j = i; j > 0 && runs[j] < runs[j - 1]; j--) {
                double t = runs[j];
                runs[j] = runs[j - 1];
                runs[j - 1] = t;
            }
        best = runs[3];
    }
    for (int i = 0; i < 3; i++)
        if (mem[i])
            dnnl_memory_destroy(mem[i]);
    if (prim)
        dnnl_primitive_destroy(prim);
    dnnl_primitive_desc_destroy(pd);
    return best;
}

int main(void)
{
    static const dnnl_data_type_t types[] = { dnnl_f32, dnnl_bf16, dnnl_f16 };
    const dnnl_version_t *v = dnnl_version();
    dnnl_engine_t e;
    dnnl_stream_t s;
    if (dnnl_engine_create(&e, dnnl_cpu, 0) != dnnl_success ||
        dnnl_stream_create(&s, e, dnnl_stream_default_flags) != dnnl_success) {
        fprintf(stderr, "bench_onednn_lowp: no oneDNN CPU engine\n");
        return 1;
    }
    printf("oneDNN %d.%d.%d, forward inference, ms a call (median of 7)\n",
           v->major, v->minor, v->patch);
    printf("%-31s %5s %-5s %10s %9s  %s\n", "layer", "batch", "type", "ms",
           "vs f32", "kernel");
    for (size_t i = 0; i < sizeof layers / sizeof *layers; i++) {
        double f32 = -1;
        for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
            char impl[96];
            double sec = time_layer(e, s, &layers[i], types[t], impl,
                                    sizeof impl);
            if (t == 0)
                f32 = sec;
            if (sec < 0)
                printf("%-31s %5d %-5s %10s %9s  %s\n", layers[i].name,
                       layers[i].n, dnnl_dt2str(types[t]), "-", "-", impl);
            else
                printf("%-31s %5d %-5s %10.3f %8.2fx  %s\n", layers[i].name,
                       layers[i].n, dnnl_dt2str(types[t]), sec * 1e3,
                       f32 > 0 ? f32 / sec : 0.0, impl);
        }
    }
    dnnl_stream_destroy(s);
    dnnl_engine_destroy(e);
    return 0;
}
