/* The order in which a stage runs its micro-batches (mp.h). */
#include "mp.h"

void mp_schedule_ops(enum mp_schedule sched, int s, int S, int M,
                     struct mp_op *ops)
{
    int n = 0;
    if (sched == MP_GPIPE) {
        for (int k = 0; k < M; k++)
            ops[n++] = (struct mp_op){0, (unsigned)k};
        for (int k = 0; k < M; k++)
            ops[n++] = (struct mp_op){1, (unsigned)k};
        return;
    }
    /* 1F1B (PipeDream-flush): a stage keeps at most S - s micro-batches
     * in flight, where GPipe keeps all M. */
    int warm = S - s - 1 < M ? S - s - 1 : M;
    int f = 0, b = 0;
    for (; f < warm; f++)
        ops[n++] = (struct mp_op){0, (unsigned)f};
    for (; f < M; f++, b++) {
        ops[n++] = (struct mp_op){0, (unsigned)f};
        ops[n++] = (struct mp_op){1, (unsigned)b};
    }
    for (; b < M; b++)
        ops[n++] = (struct mp_op){1, (unsigned)b};
}
