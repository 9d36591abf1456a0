/* Which kernel the oneDNN this build uses picks for each convolution and
 * inner product of LeNet and vgg-small, in each pass (forward,
 * backward-data, backward-weights) and precision (f32, bf16, f16), at
 * batch 256, with the layouts the cpu backend asks for (cpu_conv.c: nhwc
 * where a channel count is not a multiple of 16, else oneDNN's choice).
 * Nothing is run: it answers "does this library have an fp16 (bf16 ...)
 * kernel for this pass on this CPU, and which ISA does it use", through
 * the backend's own oneDNN shim, so for 2.x and 3.x builds alike. "ref:"
 * names oneDNN's reference implementation (plain loops, 100 to 10,000
 * times slower); "-" means none at all.
 *
 *   bench_onednn_kernels          (make bench builds it) */
#include <stdio.h>

#include <oneapi/dnnl/dnnl_debug.h> /* dnnl_dt2str */

#include "backend/cpu/cpu_dnnl_api.h"

struct layer {
    const char *name;
    int conv; /* 0: inner product */
    int ic, oc, hw, k, pad;
};

static const struct layer layers[] = {
    { "lenet conv1", 1, 1, 10, 28, 5, 0 },
    { "lenet conv2", 1, 10, 20, 12, 5, 0 },
    { "lenet fc1", 0, 320, 50, 0, 0, 0 },
    { "lenet fc2", 0, 50, 10, 0, 0, 0 },
    { "vgg conv1", 1, 1, 32, 28, 3, 1 },
    { "vgg conv2", 1, 32, 64, 14, 3, 1 },
    { "vgg conv3", 1, 64, 64, 14, 3, 1 },
    { "vgg conv4", 1, 64, 128, 7, 3, 1 },
    { "vgg conv5", 1, 128, 128, 7, 3, 1 },
    { "vgg fc", 0, 128, 10, 0, 0, 0 },
};

/* The implementation pd has, "-" when creation failed (st). */
static const char *impl(dnnl_status_t st, dnnl_primitive_desc_t pd)
{
    const char *s = "-";
    if (st == dnnl_success && pd)
        dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &s);
    return s;
}

/* The three passes of layer L in type dt: their implementations. */
static void passes(dnnl_engine_t e, const struct layer *L, dnnl_data_type_t dt)
{
    dnnl_primitive_desc_t pd[3] = { NULL, NULL, NULL };
    dnnl_status_t s[3];
    dlb_dnnl_md x, w, y;
    const dnnl_dim_t n = 256;
    if (L->conv) {
        int oh = L->hw + 2 * L->pad - L->k + 1;
        dnnl_dims_t xd = { n, L->ic, L->hw, L->hw };
        dnnl_dims_t wd = { L->oc, L->ic, L->k, L->k };
        dnnl_dims_t yd = { n, L->oc, oh, oh };
        dnnl_dims_t st = { 1, 1 }, pad = { L->pad, L->pad };
        dnnl_format_tag_t at = (L->ic > 1 && L->ic % 16) || L->oc % 16
                                   ? dnnl_acdb : dnnl_format_tag_any;
        dlb_dnnl_md_tag(&x, 4, xd, dt, at);
        dlb_dnnl_md_tag(&w, 4, wd, dt, dnnl_format_tag_any);
        dlb_dnnl_md_tag(&y, 4, yd, dt, at);
        s[0] = dlb_dnnl_conv_fwd_pd(&pd[0], e, dnnl_forward_training,
                                    dnnl_convolution_direct, &x, &w, NULL, &y,
                                    st, pad, pad, NULL);
        s[1] = dlb_dnnl_conv_bwd_data_pd(&pd[1], e, dnnl_convolution_direct,
                                         &x, &w, &y, st, pad, pad, pd[0],
                                         NULL);
        s[2] = dlb_dnnl_conv_bwd_weights_pd(&pd[2], e,
                                            dnnl_convolution_direct, &x, &w,
                                            NULL, &y, st, pad, pad, pd[0],
                                            NULL);
    } else {
        dnnl_dims_t xd = { n, L->ic }, wd = { L->oc, L->ic }, yd = { n, L->oc };
        dlb_dnnl_md_tag(&x, 2, xd, dt, dnnl_ab);
        dlb_dnnl_md_tag(&w, 2, wd, dt, dnnl_format_tag_any);
        dlb_dnnl_md_tag(&y, 2, yd, dt, dnnl_ab);
        s[0] = dlb_dnnl_ip_fwd_pd(&pd[0], e, dnnl_forward_training, &x, &w,
                                  NULL, &y, NULL);
        s[1] = dlb_dnnl_ip_bwd_data_pd(&pd[1], e, &x, &w, &y, pd[0]);
        s[2] = dlb_dnnl_ip_bwd_weights_pd(&pd[2], e, &x, &w, NULL, &y, pd[0]);
    }
    printf("%-12s %-5s %-36s %-44s %s\n", L->name, dnnl_dt2str(dt),
           impl(s[0], pd[0]), impl(s[1], pd[1]), impl(s[2], pd[2]));
    for (int i = 0; i < 3; i++)
        if (pd[i])
            dnnl_primitive_desc_destroy(pd[i]);
}

int main(void)
{
    static const dnnl_data_type_t types[] = { dnnl_f32, dnnl_bf16, dnnl_f16 };
    const dnnl_version_t *v = dnnl_version();
    dnnl_engine_t e;
    if (dnnl_engine_create(&e, dnnl_cpu, 0) != dnnl_success) {
        fprintf(stderr, "bench_onednn_kernels: no oneDNN CPU engine\n");
        return 1;
    }
    printf("oneDNN %d.%d.%d, batch 256\n%-12s %-5s %-36s %-44s %s\n", v->major,
           v->minor, v->patch, "layer", "type", "forward", "backward-data",
           "backward-weights");
    for (size_t t = 0; t < sizeof types / sizeof *types; t++)
        for (size_t i = 0; i < sizeof layers / sizeof *layers; i++)
            passes(e, &layers[i], types[t]);
    dnnl_engine_destroy(e);
    return 0;
}
