/* Moving tensors between a buffer's host view and the layout a primitive
 * chose: activations through scratch memory on every call, weights
 * through a shadow that is reordered again only after the buffer was
 * written (once per training step, not once per call). */
#include "cpu.h"

#include <string.h>

dnnl_status_t dlb_cpu_io_setup(struct dlb_cpu *cpu, struct dlb_cpu_prim *p,
                               const struct dlb_cpu_tensor *t, int n)
{
    dnnl_status_t st;
    if (n > DLB_CPU_IO_MAX)
        return dnnl_invalid_arguments;
    for (int i = 0; i < n; i++) {
        const dnnl_memory_desc_t *want = dlb_cpu_pd_md(p, 0, t[i].query);
        if (!want)
            return dnnl_invalid_arguments;
        p->io_arg[i] = t[i].arg;
        p->io_role[i] = (int)t[i].role;
        if ((st = dlb_cpu_mem(cpu, &p->mem[2 * i], &t[i].plain)) ||
            (st = dlb_cpu_mem(cpu, &p->mem[2 * i + 1], want)))
            return st;
        if (dnnl_memory_desc_equal(want, &t[i].plain))
            continue;
        st = t[i].role == DLB_CPU_OUT
                 ? dlb_cpu_reorder(cpu, &p->prim[1 + i], want, &t[i].plain)
                 : dlb_cpu_reorder(cpu, &p->prim[1 + i], &t[i].plain, want);
        if (st)
            return st;
    }
    p->n_io = n;
    return dnnl_success;
}

static const dnnl_memory_desc_t *mem_md(dnnl_memory_t m)
{
    const dnnl_memory_desc_t *md = NULL;
    dnnl_memory_get_memory_desc(m, &md);
    return md;
}

dlb_status dlb_cpu_io_run(struct dlb_backend *be, struct dlb_cpu_prim *p,
                          const char *op, const struct dlb_buffer *const *bufs,
                          int n_extra, const dnnl_exec_arg_t *extra)
{
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    dnnl_exec_arg_t args[DLB_CPU_IO_MAX + 8];
    dlb_status s = DLB_OK;
    int n = 0;
    if (n_extra > 8)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: too many "
                                "arguments", op);
    for (int i = 0; i < p->n_io; i++) {
        dnnl_memory_t plain = p->mem[2 * i], mine = p->mem[2 * i + 1];
        dnnl_primitive_t r = p->prim[1 + i];
        void *ptr = bufs[i]->data;
        if (r && p->io_role[i] == DLB_CPU_IN_WEIGHTS) {
            if ((s = dlb_cpu_shadow(be, bufs[i], mem_md(mine), r, plain, mine,
                                    &ptr)))
                return s;
        } else if (r) {
            ptr = dlb_cpu_scratch(be, i, dnnl_memory_desc_get_size(mem_md(mine)));
            if (!ptr)
                return DLB_ERR_NOMEM;
            if (p->io_role[i] == DLB_CPU_IN)
                DLB_DNNL(be, op, dlb_cpu_run_reorder(cpu, r, plain,
                                                     bufs[i]->data, mine, ptr));
        }
        DLB_DNNL(be, op, dlb_cpu_bind(mine, ptr));
        args[n].arg = p->io_arg[i];
        args[n++].memory = mine;
    }
    if (n_extra)
        memcpy(args + n, extra, (size_t)n_extra * sizeof *extra);
    DLB_DNNL(be, op, dlb_cpu_exec(cpu, p->prim[0], n + n_extra, args));
    for (int i = 0; i < p->n_io; i++) {
        if (p->io_role[i] != DLB_CPU_OUT)
            continue;
        if (p->prim[1 + i]) {
            dnnl_memory_t mine = p->mem[2 * i + 1];
            void *ptr = NULL;
            DLB_DNNL(be, op, dnnl_memory_get_data_handle(mine, &ptr));
            DLB_DNNL(be, op, dlb_cpu_run_reorder(cpu, p->prim[1 + i], mine, ptr,
                                                 p->mem[2 * i],
                                                 bufs[i]->data));
        }
        dlb_cpu_written(bufs[i]);
    }
out:
    return s;
}
