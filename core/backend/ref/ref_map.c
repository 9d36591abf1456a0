/* A buffer's bytes in place: ref buffers always hold their host view. */
#include "ref.h"

dlb_status dlb_ref_map(struct dlb_backend *be, struct dlb_buffer *b,
                       void **ptr, int *device)
{
    (void)be;
    *ptr = b->data;
    *device = 0;
    return DLB_OK;
}

dlb_status dlb_ref_unmap(struct dlb_backend *be, struct dlb_buffer *b,
                         int written)
{
    (void)be;
    (void)b;
    (void)written;
    return DLB_OK;
}
