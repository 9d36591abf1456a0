/* 2x2 stride-2 max pooling of bf16 data in blocks of 16 lanes
 * (cpu_pool_bf16.c: nChw16c, or nhwc on machines whose convolutions hand
 * that over) against the ref backend: the output, the workspace and the
 * input gradient are copies of input values and indices, so they must
 * agree exactly; random bf16 inputs tie now and then, which tests the
 * first maximum. Shapes the loops take (even sizes, channels a multiple
 * of 16, 24 channels padded to 32) and some they hand back (odd sizes).
 * Exits 77 when the cpu backend is not built in or the CPU has no bf16. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/dtype.h"
#include "backend_pair.h" /* dev: the cpu backend */
#include "backend_pair_pool.h"
#include "util/rng.h"

static double tol_of(enum dlb_dtype t, int dnn)
{
    (void)t;
    (void)dnn;
    return 0.0;
}

int main(void)
{
    char reason[512];
    int rc = pair_open("cpu", reason, sizeof reason);
    if (rc >= 0)
        return rc;
    if (DLB_BE_CALL(dev, supports, DLB_CAP_BF16, reason, sizeof reason) != DLB_OK) {
        fprintf(stderr, "skip: %s\n", reason);
        dlb_backend_close(dev);
        dlb_backend_close(ref);
        return 77;
    }
    dlb_rng_seed(&rng, 2028);
    (void)tol_of;
    (void)expect_tol; /* backend_pair.h's, for rounded results: none here */
    /* vgg-small's pool1 kind, nChw16c; pool2, nhwc on AMX machines */
    test_max2x2_after_conv(DLB_BF16, 3, 32, 8, 8);
    test_max2x2_after_conv(DLB_BF16, 2, 64, 14, 14);
    test_max2x2_after_conv(DLB_BF16, 1, 128, 6, 4);
    test_max2x2_after_conv(DLB_BF16, 2, 24, 4, 6); /* padded to 32 channels */
    test_max2x2_after_conv(DLB_BF16, 2, 32, 7, 7); /* odd: the general loops */
    test_max2x2_after_conv(DLB_BF16, 1, 20, 9, 8);
    dlb_backend_close(dev);
    dlb_backend_close(ref);
    return check_exit();
}
