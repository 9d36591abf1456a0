/* Opening the cuda backend in a GPU test: a machine without a GPU (no
 * driver, no device, no code for this device) skips with 77; a module
 * that is missing or does not load in a CUDA build is a failure, since
 * that is what CI can still check without a GPU. */
#ifndef DLB_TEST_GPU_OPEN_H
#define DLB_TEST_GPU_OPEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"

static int gpu_absent(const char *why)
{
    return strstr(why, "no CUDA driver") || strstr(why, "no CUDA device") ||
           strstr(why, "this build has no code for");
}

/* The backend, or exits: 77 without a GPU, 1 when the module is broken. */
static struct dlb_backend *gpu_open_or_skip(const struct dlb_backend_config *cfg)
{
    struct dlb_backend *be = NULL;
    char why[512] = "";
    dlb_status s = dlb_backend_open("cuda", cfg, &be, why, sizeof why);
    if (s == DLB_OK)
        return be;
    fprintf(stderr, "cuda backend: %s\n", why);
    if (s == DLB_ERR_UNSUPPORTED && gpu_absent(why)) {
        fprintf(stderr, "no GPU here: skipped\n");
        exit(77);
    }
    exit(1);
}

#endif
