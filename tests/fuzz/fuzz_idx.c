/* libFuzzer harness: IDX files, gzip'ed or plain (core/data/idx.c), read
 * as images (3 dimensions) and as labels (1). */
#include <stddef.h>
#include <stdint.h>

#include "data/idx.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_file f;
    if (fuzz_file_open(&f, data, size) != 0)
        return 0;
    for (uint32_t ndim = 1; ndim <= 3; ndim += 2) {
        struct dlb_idx x;
        struct dlb_error err = {""};
        if (dlb_idx_read(f.path, ndim, &x, &err) == DLB_OK) {
            /* The payload must hold what the header says. */
            size_t n = 1;
            for (uint32_t k = 0; k < x.ndim; k++)
                n *= x.dims[k];
            if (n != x.size || (n && (x.data[0] | x.data[n - 1]) == 0xFFFF))
                __builtin_trap();
            dlb_idx_free(&x);
        }
    }
    fuzz_file_close(&f);
    return 0;
}
