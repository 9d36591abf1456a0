/* The shipped reference networks (suites/models/, written by
 * make-models.py) load, and their parameters and multiply-accumulates are
 * torchvision's: ResNet-50 v1.5 25,557,032 parameters and 4,089,184,256
 * MACs forward per image at 224x224, ResNet-18 11,689,512 and
 * 1,814,073,344, MobileNetV2 3,504,872 and 300,774,272 (the figures
 * torchvision's models and the usual counters give; parameters counted as
 * torch's numel over parameters(), batch-norm running statistics not
 * included). The 32x32 forms for Fashion-MNIST: ResNet-20 with projection
 * shortcuts, ResNet-8 (one block per stage) and the narrow MobileNetV2. */
#include "check.h"

#include <string.h>

#include "model_fixture.h"

struct zoo {
    const char *file;
    uint64_t params;
    double macs;
    size_t layers;
    uint32_t in_c, in_hw, classes;
};

static double macs_of(const struct dlb_model_spec *s)
{
    double m = 0;
    for (size_t i = 0; i < s->n_layers; i++)
        if (s->layers[i].kind == DLB_LAYER_CONV ||
            s->layers[i].kind == DLB_LAYER_LINEAR)
            m += s->layers[i].flops_fwd / 2;
    return m;
}

int main(void)
{
    static const struct zoo nets[] = {
        {"suites/models/resnet50.ini", 25557032, 4089184256.0, 176, 3, 224, 1000},
        {"suites/models/resnet18.ini", 11689512, 1814073344.0, 70, 3, 224, 1000},
        {"suites/models/mobilenet-v2.ini", 3504872, 300774272.0, 154, 3, 224, 1000},
        {"suites/models/resnet20.ini", 272186, 40518272.0, 74, 1, 32, 10},
        {"suites/models/resnet8.ini", 77754, 12206720.0, 32, 1, 32, 10},
        {"suites/models/mobilenet-v2-32.ini", 700202, 27674112.0, 154, 1, 32, 10},
    };
    for (size_t k = 0; k < sizeof nets / sizeof nets[0]; k++) {
        const struct zoo *z = &nets[k];
        struct dlb_model_spec *s = fx_load_spec(z->file);
        if (!s)
            continue;
        if (s->params != z->params || macs_of(s) != z->macs)
            fprintf(stderr, "%s: %llu parameters, %.0f MACs\n", z->file,
                    (unsigned long long)s->params, macs_of(s));
        CHECK(s->params == z->params);
        CHECK(macs_of(s) == z->macs);
        CHECK(s->n_layers == z->layers && s->in_c == z->in_c &&
              s->in_h == z->in_hw && s->in_w == z->in_hw &&
              s->classes == z->classes);
        CHECK(s->loss == DLB_LOSS_CROSS_ENTROPY &&
              !strcmp(s->layers[s->n_layers - 1].name, "cross_entropy"));
        CHECK(!dlb_model_spec_is_chain(s));
        dlb_model_spec_free(s);
    }
    return check_exit();
}
