/* libFuzzer harness: image files as an image folder's decoder reads them
 * (core/data/image_decode.c: PNG through libpng, JPEG through TurboJPEG,
 * told apart by their first bytes). Each input is decoded to grey and to
 * RGB, at full size and at a scaled JPEG size; a decoded image must hold
 * exactly h x w x c bytes, all of which are read. A corrupt file must be
 * an error, never a crash, a leak or an out-of-bounds read. */
#include <stddef.h>
#include <stdint.h>

#include "data/image_decode.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void decode(const char *path, uint32_t c, uint32_t min_side)
{
    struct dlb_image im = {0};
    struct dlb_error err = {""};
    if (dlb_image_decode(path, c, min_side, min_side, &im, &err) != DLB_OK)
        return;
    if (!im.px || im.c != c || !im.w || !im.h)
        __builtin_trap();
    volatile unsigned sum = 0;
    for (size_t i = 0; i < (size_t)im.w * im.h * im.c; i++)
        sum += im.px[i];
    (void)sum;
    dlb_image_free(&im);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_file f;
    if (fuzz_file_open(&f, data, size) != 0)
        return 0;
    decode(f.path, 1, 0);
    decode(f.path, 3, 0);
    decode(f.path, 3, 8);
    fuzz_file_close(&f);
    return 0;
}
