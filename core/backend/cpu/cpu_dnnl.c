/* Thin helpers over oneDNN's C API: error reporting, descriptors, memory
 * objects, primitive creation and execution. */
#include "cpu.h"
#include "../dtype.h"

#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static const char *dnnl_status_name(dnnl_status_t st)
{
    switch (st) {
    case dnnl_success: return "dnnl_success";
    case dnnl_out_of_memory: return "dnnl_out_of_memory";
    case dnnl_invalid_arguments: return "dnnl_invalid_arguments";
    case dnnl_unimplemented: return "dnnl_unimplemented";
    case dnnl_runtime_error: return "dnnl_runtime_error";
    case dnnl_not_required: return "dnnl_not_required";
    default: break; /* 3.x adds its graph API's statuses */
    }
    return "unknown dnnl status";
}

dlb_status dlb_cpu_dnnl_fail(struct dlb_backend *be, dnnl_status_t st,
                             const char *op, const char *call)
{
    /* Only the function name of the call: the arguments are noise. */
    size_t n = strcspn(call, "(");
    if (st == dnnl_unimplemented)
        return dlb_backend_fail(be, DLB_ERR_UNSUPPORTED, "cpu %s: oneDNN has no "
                                "kernel for these shapes and types on this CPU "
                                "(%.*s: %s)", op, (int)n, call,
                                dnnl_status_name(st));
    return dlb_backend_fail(be, st == dnnl_out_of_memory ? DLB_ERR_NOMEM
                                                         : DLB_ERR_RUNTIME,
                            "cpu %s: %.*s failed: %s", op, (int)n, call,
                            dnnl_status_name(st));
}

dnnl_data_type_t dlb_cpu_dnnl_type(enum dlb_dtype t)
{
    switch (t) {
    case DLB_F32: return dnnl_f32;
    case DLB_F16: return dnnl_f16;
    case DLB_BF16: return dnnl_bf16;
    case DLB_S8: return dnnl_s8;
    case DLB_U8: return dnnl_u8;
    case DLB_S32: return dnnl_s32;
    case DLB_F64: break;
    }
    return dnnl_data_type_undef;
}

dlb_status dlb_cpu_check_float(struct dlb_backend *be, const char *op,
                               const char *arg, const struct dlb_buffer *b,
                               size_t count)
{
    if (!b)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: %s is NULL",
                                op, arg);
    switch (b->dtype) {
    case DLB_F32:
    case DLB_BF16:
        break;
    case DLB_F16: {
        char why[256];
        dlb_cpu_f16_reason(why, sizeof why);
        return dlb_backend_fail(be, DLB_ERR_UNSUPPORTED, "cpu %s: %s is f16: %s",
                                op, arg, why);
    }
    default:
        return dlb_backend_fail(be, DLB_ERR_UNSUPPORTED, "cpu %s: %s is %s; "
                                "the operation runs on f32 or bf16", op, arg,
                                dlb_dtype_name(b->dtype));
    }
    if (b->count < count)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: %s holds %zu "
                                "elements, needs %zu", op, arg, b->count, count);
    return DLB_OK;
}

dlb_status dlb_cpu_check_s32(struct dlb_backend *be, const char *op,
                             const char *arg, const struct dlb_buffer *b,
                             size_t count)
{
    if (!b || b->dtype != DLB_S32 || b->count < count)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: %s must be s32 "
                                "with %zu elements", op, arg, count);
    return DLB_OK;
}

dnnl_status_t dlb_cpu_md_plain(dlb_dnnl_md *md, int ndims,
                               const dnnl_dim_t *dims, dnnl_data_type_t dt)
{
    /* up to 5-D: a grouped convolution's weights */
    static const dnnl_format_tag_t tags[] = {
        dnnl_format_tag_undef, dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde
    };
    if (ndims < 1 || ndims > 5)
        return dnnl_invalid_arguments;
    return dlb_dnnl_md_tag(md, ndims, dims, dt, tags[ndims]);
}

dnnl_status_t dlb_cpu_mem(struct dlb_cpu *cpu, dnnl_memory_t *m,
                          const dlb_dnnl_md *md)
{
    return dlb_dnnl_memory_create(m, md, cpu->engine, DNNL_MEMORY_NONE);
}

dnnl_status_t dlb_cpu_reorder(struct dlb_cpu *cpu, dnnl_primitive_t *prim,
                              const dlb_dnnl_md *src,
                              const dlb_dnnl_md *dst)
{
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = dlb_dnnl_reorder_pd(&pd, cpu->engine, src, dst);
    if (st != dnnl_success)
        return st;
    st = dnnl_primitive_create(prim, pd);
    dnnl_primitive_desc_destroy(pd); /* the primitive keeps its own copy */
    return st;
}

dnnl_status_t dlb_cpu_make(struct dlb_cpu_prim *p, int i)
{
    return dnnl_primitive_create(&p->prim[i], p->pd[i]);
}

dnnl_status_t dlb_cpu_bind(dnnl_memory_t m, const void *data)
{
    /* oneDNN takes a non-const handle; inputs are only read. */
    return dnnl_memory_set_data_handle(m, (void *)(uintptr_t)data);
}

/* The bytes of a primitive's arguments, to tell work too small to share
 * between threads. */
static size_t args_bytes(int n, const dnnl_exec_arg_t *args)
{
    size_t bytes = 0;
    for (int i = 0; i < n; i++)
        bytes += dlb_dnnl_memory_size(args[i].memory);
    return bytes;
}

dnnl_status_t dlb_cpu_exec(struct dlb_cpu *cpu, dnnl_primitive_t prim, int n,
                           const dnnl_exec_arg_t *args)
{
    /* A primitive on less data than the backend's own loops share (batch-1
     * inference: LeNet's layers touch 3-64 KB each) runs on the calling
     * thread: each parallel region's fork and join cost more than the
     * work. Measured on 2 cores: LeNet batch-1 inference 31 us a step
     * with every op on both threads, 23 us on one. */
#ifdef _OPENMP
    int threads = omp_get_max_threads();
    int serial = threads > 1 &&
                 args_bytes(n, args) < DLB_CPU_PAR_MIN * sizeof(float);
    if (serial)
        omp_set_num_threads(1);
    dnnl_status_t st = dnnl_primitive_execute(prim, cpu->stream, n, args);
    if (serial)
        omp_set_num_threads(threads);
#else
    dnnl_status_t st = dnnl_primitive_execute(prim, cpu->stream, n, args);
#endif
    /* The CPU stream is in-order and oneDNN runs OpenMP primitives before
     * returning, but wait anyway: the interface promises synchronous ops. */
    return st == dnnl_success ? dnnl_stream_wait(cpu->stream) : st;
}

dnnl_status_t dlb_cpu_run_reorder(struct dlb_cpu *cpu, dnnl_primitive_t r,
                                  dnnl_memory_t src_mem, const void *src,
                                  dnnl_memory_t dst_mem, void *dst)
{
    dnnl_status_t st;
    if ((st = dlb_cpu_bind(src_mem, src)) != dnnl_success ||
        (st = dlb_cpu_bind(dst_mem, dst)) != dnnl_success)
        return st;
    dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, src_mem },
                                { DNNL_ARG_TO, dst_mem } };
    return dlb_cpu_exec(cpu, r, 2, args);
}
