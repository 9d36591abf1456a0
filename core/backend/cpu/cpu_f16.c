/* Why the cpu backend does not compute in fp16, as a true statement about
 * this machine and this build: whether the CPU has AVX512_FP16, and which
 * kernels the oneDNN library in use has for fp16 convolutions and inner
 * products, asked of the library itself. oneDNN 2.6 has none; 3.2 has
 * them on AVX512_FP16 but for convolution backward-weights only its
 * reference kernel (875 ms a call against bf16's 0.24 ms at vgg-small's
 * 64 -> 64 channels, 14x14, batch 16), which no training step can use,
 * and its forward kernels ran at 0.63-0.81x of f32 on a Sapphire Rapids
 * (tests/unit/bench_onednn_lowp), so inference alone would not pay.
 * The backend's operations take f32 and bf16.
 * tests/unit/bench_onednn_kernels lists every layer's kernels. */
#include "cpu.h"

#include <cpuid.h>
#include <stdio.h>
#include <string.h>

/* AVX512_FP16 is CPUID leaf 7, EDX bit 23. */
static int cpu_has_avx512_fp16(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    return (d >> 23) & 1u;
}

/* What oneDNN picks for pd: 1 an optimised kernel, 0 its reference one
 * (named in impl), -1 none at all. */
static int kernel_of(dnnl_status_t st, dnnl_primitive_desc_t pd,
                     const char **impl)
{
    *impl = "";
    if (st != dnnl_success || !pd)
        return -1;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, impl);
    return strncmp(*impl, "ref", 3) != 0;
}

/* The first pass of an fp16 convolution (vgg-small's 64 -> 64 at 14x14)
 * or inner product (its 512 -> 10 classifier), layouts left to oneDNN,
 * without an optimised kernel, and what oneDNN has for it in `what`; NULL
 * when all six have one. */
static const char *missing_pass(dnnl_engine_t e, char *what, size_t len)
{
    static const char *const names[6] = {
        "convolution forward", "convolution backward-data",
        "convolution backward-weights", "inner product forward",
        "inner product backward-data", "inner product backward-weights"
    };
    dnnl_dims_t xd = { 16, 64, 14, 14 }, wd = { 64, 64, 3, 3 };
    dnnl_dims_t id = { 16, 512 }, iw = { 10, 512 }, od = { 16, 10 };
    dnnl_dims_t st = { 1, 1 }, pad = { 1, 1 };
    dnnl_primitive_desc_t pd[6] = { NULL };
    dnnl_status_t s[6];
    dlb_dnnl_md x, w, ix, iwa, oy;
    const char *miss = NULL;
    if (dlb_dnnl_md_tag(&x, 4, xd, dnnl_f16, dnnl_format_tag_any) ||
        dlb_dnnl_md_tag(&w, 4, wd, dnnl_f16, dnnl_format_tag_any) ||
        dlb_dnnl_md_tag(&ix, 2, id, dnnl_f16, dnnl_ab) ||
        dlb_dnnl_md_tag(&iwa, 2, iw, dnnl_f16, dnnl_format_tag_any) ||
        dlb_dnnl_md_tag(&oy, 2, od, dnnl_f16, dnnl_ab))
        return names[0];
    s[0] = dlb_dnnl_conv_fwd_pd(&pd[0], e, dnnl_forward_training,
                                dnnl_convolution_direct, &x, &w, NULL, &x, st,
                                pad, pad, NULL);
    s[1] = dlb_dnnl_conv_bwd_data_pd(&pd[1], e, dnnl_convolution_direct, &x,
                                     &w, &x, st, pad, pad, pd[0], NULL);
    s[2] = dlb_dnnl_conv_bwd_weights_pd(&pd[2], e, dnnl_convolution_direct,
                                        &x, &w, NULL, &x, st, pad, pad, pd[0],
                                        NULL);
    s[3] = dlb_dnnl_ip_fwd_pd(&pd[3], e, dnnl_forward_training, &ix, &iwa,
                              NULL, &oy, NULL);
    s[4] = dlb_dnnl_ip_bwd_data_pd(&pd[4], e, &ix, &iwa, &oy, pd[3]);
    s[5] = dlb_dnnl_ip_bwd_weights_pd(&pd[5], e, &ix, &iwa, NULL, &oy, pd[3]);
    for (int i = 0; i < 6; i++) {
        const char *impl;
        int k = kernel_of(s[i], pd[i], &impl);
        if (!miss && k <= 0) {
            miss = names[i];
            snprintf(what, len, k < 0 ? "no kernel at all"
                                      : "only its reference one (%s)", impl);
        }
        if (pd[i])
            dnnl_primitive_desc_destroy(pd[i]);
    }
    return miss;
}

void dlb_cpu_f16_reason(char *buf, size_t len)
{
    const dnnl_version_t *v = dnnl_version();
    int fp16 = cpu_has_avx512_fp16();
    char lib[160], what[80] = "";
    dnnl_engine_t e = NULL;
    const char *miss = "convolution forward";
    if (dnnl_engine_create(&e, dnnl_cpu, 0) == dnnl_success) {
        miss = missing_pass(e, what, sizeof what);
        dnnl_engine_destroy(e);
    }
    if (miss)
        snprintf(lib, sizeof lib, "oneDNN %d.%d.%d, the library this build "
                 "uses, has no fp16 kernel for %s %s: %s",
                 v->major, v->minor, v->patch, miss,
                 fp16 ? "here" : "on it", what[0] ? what : "not offered");
    else
        snprintf(lib, sizeof lib, "oneDNN %d.%d.%d has fp16 kernels %s for "
                 "every pass, which the backend does not use", v->major,
                 v->minor, v->patch, fp16 ? "here" : "for it");
    if (fp16)
        snprintf(buf, len, "this CPU has AVX512_FP16, but the cpu backend has "
                 "no fp16 operations: %s", lib);
    else
        snprintf(buf, len, "this CPU has no AVX512_FP16 (and %s)", lib);
}
