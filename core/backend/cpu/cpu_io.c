/* Moving tensors between a buffer and the layout a primitive chose:
 * activations are written in the primitive's layout, which the buffer
 * then carries (cpu_layout.c), and read as they are when their layout is
 * the one wanted, else through scratch; weights through a shadow that is
 * reordered again only after the buffer was written (once per training
 * step, not once per call); weight gradients back to the host view. */
#include "cpu.h"

#include <string.h>

dnnl_status_t dlb_cpu_io_setup(struct dlb_cpu *cpu, struct dlb_cpu_prim *p,
                               const struct dlb_cpu_tensor *t, int n)
{
    dnnl_status_t st;
    if (n > DLB_CPU_IO_MAX)
        return dnnl_invalid_arguments;
    for (int i = 0; i < n; i++) {
        const dlb_dnnl_md *want = &p->io_md[i];
        if ((t[i].query == dnnl_query_exec_arg_md
                 ? dlb_dnnl_pd_arg_md(&p->io_md[i], p->pd[0], t[i].arg)
                 : dlb_dnnl_pd_md(&p->io_md[i], p->pd[0], t[i].query)) !=
            dnnl_success)
            return dnnl_invalid_arguments;
        p->io_arg[i] = t[i].arg;
        p->io_role[i] = (int)t[i].role;
        if (t[i].role == DLB_CPU_OUT_RETYPED) {
            /* The primitive's layout with the buffer's element type. */
            if ((st = dlb_dnnl_md_retype(&p->io_out[i], want,
                                         t[i].plain.data_type)) ||
                (st = dlb_cpu_mem(cpu, &p->mem[2 * i], &p->io_out[i])) ||
                (st = dlb_cpu_mem(cpu, &p->mem[2 * i + 1], want)) ||
                (st = dlb_cpu_reorder(cpu, &p->prim[1 + i], want,
                                      &p->io_out[i])))
                return st;
            continue;
        }
        if ((st = dlb_cpu_mem(cpu, &p->mem[2 * i], &t[i].plain)) ||
            (st = dlb_cpu_mem(cpu, &p->mem[2 * i + 1], want)))
            return st;
        /* Activations go through dlb_cpu_view and dlb_cpu_set_layout. */
        if (dlb_dnnl_md_equal(want, &t[i].plain) ||
            t[i].role == DLB_CPU_IN || t[i].role == DLB_CPU_OUT)
            continue;
        st = t[i].role == DLB_CPU_OUT_WEIGHTS
                 ? dlb_cpu_reorder(cpu, &p->prim[1 + i], want, &t[i].plain)
                 : dlb_cpu_reorder(cpu, &p->prim[1 + i], &t[i].plain, want);
        if (st)
            return st;
    }
    p->n_io = n;
    return dnnl_success;
}

/* Where tensor i of p is for this call (a view, a shadow, scratch). */
static dlb_status io_ptr(struct dlb_backend *be, struct dlb_cpu_prim *p, int i,
                         const struct dlb_buffer *buf, void **out)
{
    dnnl_memory_t plain = p->mem[2 * i], mine = p->mem[2 * i + 1];
    dnnl_primitive_t r = p->prim[1 + i];
    struct dlb_buffer *o = (struct dlb_buffer *)(uintptr_t)buf;
    dlb_status s = DLB_OK;
    *out = buf->data;
    switch ((enum dlb_cpu_role)p->io_role[i]) {
    case DLB_CPU_IN_WEIGHTS: /* a NULL reorder hands back the data */
        s = dlb_cpu_shadow(be, buf, &p->io_md[i], r, plain, mine, out);
        break;
    case DLB_CPU_IN:
        s = dlb_cpu_view(be, buf, &p->io_md[i], i, out);
        break;
    case DLB_CPU_OUT: /* o is an output: its head is the caller's */
        s = dlb_cpu_set_layout(be, o, &p->io_md[i]);
        *out = o->data;
        break;
    case DLB_CPU_OUT_WEIGHTS:
        s = dlb_cpu_set_layout(be, o, NULL);
        if (!s && r && !(*out = dlb_cpu_scratch(
                             be, i, dlb_dnnl_md_size(&p->io_md[i]))))
            s = DLB_ERR_NOMEM;
        break;
    case DLB_CPU_OUT_RETYPED:
        s = dlb_cpu_set_layout(be, o, &p->io_out[i]);
        if (!s && !(*out = dlb_cpu_scratch(
                        be, i, dlb_dnnl_md_size(&p->io_md[i]))))
            s = DLB_ERR_NOMEM;
        break;
    }
    return s;
}

dlb_status dlb_cpu_io_ptrs(struct dlb_backend *be, struct dlb_cpu_prim *p,
                           const struct dlb_buffer *const *bufs, void **ptrs)
{
    dlb_status s = DLB_OK;
    for (int i = 0; i < p->n_io && !s; i++)
        s = io_ptr(be, p, i, bufs[i], &ptrs[i]);
    return s;
}

dlb_status dlb_cpu_io_done(struct dlb_backend *be, struct dlb_cpu_prim *p,
                           const char *op, const struct dlb_buffer *const *bufs)
{
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    dlb_status s = DLB_OK;
    for (int i = 0; i < p->n_io; i++) {
        if (p->io_role[i] != DLB_CPU_OUT &&
            p->io_role[i] != DLB_CPU_OUT_WEIGHTS &&
            p->io_role[i] != DLB_CPU_OUT_RETYPED)
            continue;
        if (p->io_role[i] != DLB_CPU_OUT && p->prim[1 + i]) {
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

dlb_status dlb_cpu_io_run(struct dlb_backend *be, struct dlb_cpu_prim *p,
                          const char *op, const struct dlb_buffer *const *bufs,
                          int n_extra, const dnnl_exec_arg_t *extra)
{
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    dnnl_exec_arg_t args[DLB_CPU_IO_MAX + 8];
    void *ptrs[DLB_CPU_IO_MAX];
    dlb_status s = DLB_OK;
    int n = 0;
    if (n_extra > 8)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: too many "
                                "arguments", op);
    if ((s = dlb_cpu_io_ptrs(be, p, bufs, ptrs)))
        return s;
    for (int i = 0; i < p->n_io; i++) {
        DLB_DNNL(be, op, dlb_cpu_bind(p->mem[2 * i + 1], ptrs[i]));
        args[n].arg = p->io_arg[i];
        args[n++].memory = p->mem[2 * i + 1];
    }
    if (n_extra)
        memcpy(args + n, extra, (size_t)n_extra * sizeof *extra);
    DLB_DNNL(be, op, dlb_cpu_exec(cpu, p->prim[0], n + n_extra, args));
    s = dlb_cpu_io_done(be, p, op, bufs);
out:
    return s;
}
