/* A buffer's host view in place, for MPI data parallelism: the buffer is
 * brought to its dense host layout (a primitive may have left it blocked)
 * and its memory handed out; writing through it makes the weight shadows
 * reordered from the old contents stale. */
#include "cpu.h"

dlb_status dlb_cpu_map(struct dlb_backend *be, struct dlb_buffer *b,
                       void **ptr, int *device)
{
    dlb_status s = dlb_cpu_make_plain(be, b);
    *ptr = s == DLB_OK ? b->data : NULL;
    *device = 0;
    return s;
}

dlb_status dlb_cpu_unmap(struct dlb_backend *be, struct dlb_buffer *b,
                         int written)
{
    (void)be;
    if (written)
        dlb_cpu_written(b);
    return DLB_OK;
}
