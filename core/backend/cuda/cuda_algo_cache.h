/* The convolution algorithms a search chose, kept on disk so that later
 * runs on the same GPU and cuDNN skip the timing: one line per shape,
 * compute type, math mode and direction, in
 * $DLBENCH_CACHE_DIR (else $XDG_CACHE_HOME/dlbench, else
 * ~/.cache/dlbench)/cudnn-algos.tsv. Lines of another GPU or cuDNN version
 * are kept and ignored. A cache that cannot be read or written only costs
 * the search again. */
#ifndef DLB_CUDA_ALGO_CACHE_H
#define DLB_CUDA_ALGO_CACHE_H

#include "cuda.h"

/* 1 and the choice when the cache has one for this key, else 0. */
int dlb_cuda_algo_cache_get(struct dlb_cuda *cu, const struct dlb_conv2d_desc *d,
                            enum dlb_dtype t, enum dlb_cuda_conv_dir dir,
                            int *algo, cudnnMathType_t *math);
/* Remember a choice, in memory and appended to the file. */
void dlb_cuda_algo_cache_put(struct dlb_cuda *cu, const struct dlb_conv2d_desc *d,
                             enum dlb_dtype t, enum dlb_cuda_conv_dir dir,
                             int algo, cudnnMathType_t math);

#endif
