/* libFuzzer harness: ONNX models (core/model/onnx_*.c), from memory, so
 * external data is refused rather than read. A model the importer accepts
 * is walked as model creation would: every layer's shapes and inputs, and
 * every weight's values, whose count must be its shape's product. */
#include <stddef.h>
#include <stdint.h>

#include "model/model_weights.h"
#include "model/onnx_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dlb_model_spec *m = NULL;
    struct dlb_error err = {""};
    if (dlb_onnx_parse("fuzz.onnx", data, size, NULL, &m, &err) != DLB_OK)
        return 0;
    volatile double sum = 0;
    for (size_t i = 0; i < m->n_layers; i++) {
        const struct dlb_layer_spec *L = &m->layers[i];
        for (uint32_t k = 0; k < L->n_inputs; k++)
            if (L->inputs[k] < DLB_LAYER_INPUT || L->inputs[k] >= (int32_t)i)
                __builtin_trap();
        sum += (double)L->out_c * L->out_h * L->out_w;
    }
    const struct dlb_model_weights *w = m->weights;
    for (size_t i = 0; w && i < w->n; i++) {
        size_t n = 1;
        for (unsigned k = 0; k < w->t[i].ndim; k++)
            n *= w->t[i].shape[k];
        if (n != w->t[i].count)
            __builtin_trap();
        for (size_t k = 0; k < n; k++)
            sum += w->t[i].data[k];
    }
    (void)sum;
    dlb_model_spec_free(m);
    return 0;
}
