/* Engine nccl's probe: can every stage on this host have a GPU of its
 * own? Every rank answers the same from the same facts (the host's GPUs,
 * the launcher's ranks per host), so the ranks of a configuration skip
 * together rather than some waiting for the others for ever.
 *
 * Nothing here starts the CUDA runtime before the rank's device is
 * chosen: the runtime reads CUDA_VISIBLE_DEVICES once, when it starts, so
 * the GPUs are counted with NVML (the driver's library, loaded at run
 * time: no link dependency), CUDA_VISIBLE_DEVICES is narrowed to the
 * rank's own device, and only then does the runtime look. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mp_nccl.h"

/* The first of the launchers' variables that is set, or NULL. */
static const char *env_any(const char *const *vars)
{
    for (const char *const *v = vars; *v; v++)
        if (getenv(*v) && *getenv(*v))
            return getenv(*v);
    return NULL;
}

const char *mp_nccl_local_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK",
                                       "MPI_LOCALRANKID", "SLURM_LOCALID",
                                       "PMI_LOCAL_RANK", NULL};
    return env_any(vars);
}

/* Ranks the launcher put on this host; `ranks` (all on one host) when it
 * does not say. */
static int local_size(int ranks)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_SIZE",
                                       "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE",
                                       "PMI_LOCAL_SIZE", NULL};
    const char *v = env_any(vars);
    int n = v ? atoi(v) : 0;
    return n > 0 ? n : ranks;
}

/* The GPUs of this host this process may use, or -1 with why none: the
 * entries of CUDA_VISIBLE_DEVICES when set, else NVML's count. */
static int host_gpus(char *why, size_t len)
{
    typedef int (*nvml_void_fn)(void);
    typedef int (*nvml_count_fn)(unsigned *);
    typedef const char *(*nvml_str_fn)(int);
    union { void *obj; nvml_void_fn f; } init, fini;
    union { void *obj; nvml_count_fn f; } count;
    union { void *obj; nvml_str_fn f; } str;
    unsigned n = 0;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, len, "no CUDA driver on this host (%s)", dlerror());
        return -1;
    }
    init.obj = dlsym(lib, "nvmlInit_v2");
    fini.obj = dlsym(lib, "nvmlShutdown");
    count.obj = dlsym(lib, "nvmlDeviceGetCount_v2");
    str.obj = dlsym(lib, "nvmlErrorString");
    int rc = init.obj && fini.obj && count.obj ? init.f() : -1;
    if (rc == 0) {
        rc = count.f(&n);
        fini.f();
    }
    if (rc != 0) {
        snprintf(why, len, "no usable CUDA driver on this host (NVML: %s)",
                 rc > 0 && str.obj ? str.f(rc) : "its entry points are missing");
        dlclose(lib);
        return -1;
    }
    dlclose(lib);
    const char *set = getenv("CUDA_VISIBLE_DEVICES");
    if (set) {
        int listed = *set ? 1 : 0;
        for (const char *c = set; *c; c++)
            listed += *c == ',';
        return listed < (int)n ? listed : (int)n;
    }
    return (int)n;
}

/* CUDA_VISIBLE_DEVICES for the rank with index `local` on its host:
 * that index, or the local-th entry of a list already set, so that
 * stages sharing a host never share a GPU. */
static void narrow_devices(int local)
{
    const char *set = getenv("CUDA_VISIBLE_DEVICES");
    char one[64];
    if (!set || !*set) {
        snprintf(one, sizeof one, "%d", local);
        setenv("CUDA_VISIBLE_DEVICES", one, 1);
        return;
    }
    const char *p = set;
    for (int i = 0; i < local && strchr(p, ','); i++)
        p = strchr(p, ',') + 1;
    snprintf(one, sizeof one, "%.*s", (int)strcspn(p, ","), p);
    setenv("CUDA_VISIBLE_DEVICES", one, 1);
}

dlb_status mp_nccl_probe(const struct dlb_host *h, const struct mp_settings *s,
                         char *reason, size_t len)
{
    char why[256], host[256] = "this host";
    int count = 0;
    (void)h;
    int gpus = host_gpus(why, sizeof why);
    if (gpus < 0) {
        snprintf(reason, len, "engine nccl: %s; it runs each of the %d stages "
                 "on a GPU of its own", why, s->ranks);
        return DLB_ERR_UNSUPPORTED;
    }
    int here = local_size(s->ranks);
    const char *lr = mp_nccl_local_rank();
    int local = lr ? atoi(lr) : 0;
    gethostname(host, sizeof host - 1);
    if (gpus < here) {
        snprintf(reason, len, "engine nccl: %d GPU%s on %s < %d stages on it "
                 "(one GPU per stage; ranks = %d)%s", gpus, gpus == 1 ? "" : "s",
                 host, here, s->ranks,
                 getenv("CUDA_VISIBLE_DEVICES") ? " with CUDA_VISIBLE_DEVICES "
                                                  "set" : "");
        return DLB_ERR_UNSUPPORTED;
    }
    narrow_devices(local < 0 ? 0 : local);
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count < 1) {
        snprintf(reason, len, "engine nccl: no CUDA device for stage rank with "
                 "local index %d (CUDA_VISIBLE_DEVICES=%s): %s", local,
                 getenv("CUDA_VISIBLE_DEVICES"),
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return DLB_ERR_UNSUPPORTED;
    }
    return DLB_OK;
}
