/* libFuzzer harness: safetensors checkpoints (core/ckpt/safetensors_read.c).
 * A file the reader accepts is walked as a model load would: every tensor's
 * bytes read, every name and metadata value looked up. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ckpt/safetensors.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_file f;
    if (fuzz_file_open(&f, data, size) != 0)
        return 0;
    struct dlb_st_file st;
    struct dlb_error err = {""};
    if (dlb_st_read(f.path, &st, &err) == DLB_OK) {
        volatile unsigned sum = 0;
        for (size_t i = 0; i < st.n; i++) {
            const struct dlb_st_tensor *t = &st.tensors[i];
            const unsigned char *b = t->data;
            for (size_t k = 0; k < t->bytes; k++)
                sum += b[k];
            if (dlb_st_find(&st, t->name) == NULL)
                __builtin_trap();
        }
        for (size_t i = 0; i < st.n_meta; i++)
            sum += (unsigned)strlen(dlb_st_meta(&st, st.meta[i].key));
        (void)sum;
        dlb_st_free(&st);
    }
    fuzz_file_close(&f);
    return 0;
}
