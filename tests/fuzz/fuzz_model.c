/* libFuzzer harness: network description files (core/model/model_file.c),
 * parsed from memory, shapes inferred and checked. */
#include <stddef.h>
#include <stdint.h>

#include "model/model_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dlb_model_spec *m = NULL;
    struct dlb_error err = {""};
    if (dlb_model_file_parse("fuzz.ini", (const char *)data, size, &m, &err) == DLB_OK) {
        /* What the callers read: every layer's shapes and counts. */
        volatile double sink = m->flops_fwd + m->flops_bwd + (double)m->params;
        for (size_t i = 0; i < m->n_layers; i++)
            sink += (double)m->layers[i].out_c * m->layers[i].out_h *
                    m->layers[i].out_w + (double)dlb_layer_kind_name(m->layers[i].kind)[0];
        (void)sink;
        dlb_model_spec_free(m);
    }
    return 0;
}
