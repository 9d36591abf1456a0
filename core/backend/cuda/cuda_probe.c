/* Can the cuda backend run here? Asked by the parent dlbench (list, info),
 * which must not initialise CUDA itself (DESIGN: only a configuration's
 * own process does), so a short-lived child asks the driver and writes the
 * answer back through a pipe: "" when a device is there, else the reason. */
#include "cuda.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* The driver's answer can take a few seconds on a cold machine (it loads
 * the GPU's firmware); a hung driver must not hang dlbench list. */
#define PROBE_TIMEOUT_MS 30000

int dlb_cuda_device_count(int *count, char *reason, size_t len)
{
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    cudaError_t e;
    *count = 0;
    if (!drv) {
        snprintf(reason, len, "no CUDA driver: libcuda.so.1 not found "
                 "(install the NVIDIA driver)");
        return 0;
    }
    dlclose(drv); /* the runtime holds its own reference once it loads it */
    if ((e = cudaGetDeviceCount(count)) != cudaSuccess) {
        snprintf(reason, len, "no CUDA device: cudaGetDeviceCount: %s",
                 cudaGetErrorString(e));
        (void)cudaGetLastError();
        *count = 0;
        return 0;
    }
    if (*count == 0) {
        snprintf(reason, len, "no CUDA device: the driver sees none");
        return 0;
    }
    return 1;
}

static void child_probe(int fd)
{
    char msg[256] = "";
    int count = 0;
    dlb_cuda_device_count(&count, msg, sizeof msg);
    if (write(fd, msg, strlen(msg) + 1) < 0) {
        /* the parent reads EOF and says so */
    }
    _exit(0);
}

int dlb_cuda_probe(char *reason, size_t len)
{
    int fds[2];
    char msg[256] = { 0 }; /* read at most 255 bytes: stays terminated */
    size_t got = 0;
    pid_t pid;
    if (pipe(fds) != 0) {
        snprintf(reason, len, "cuda: cannot probe the driver: pipe: %s",
                 strerror(errno));
        return 0;
    }
    pid = fork();
    if (pid < 0) {
        snprintf(reason, len, "cuda: cannot probe the driver: fork: %s",
                 strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return 0;
    }
    if (pid == 0) {
        close(fds[0]);
        child_probe(fds[1]);
    }
    close(fds[1]);
    while (got < sizeof msg - 1) {
        struct pollfd p = { fds[0], POLLIN, 0 };
        int r = poll(&p, 1, PROBE_TIMEOUT_MS);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            kill(pid, SIGKILL);
            snprintf(msg, sizeof msg, "cuda: the driver did not answer within "
                     "%d s", PROBE_TIMEOUT_MS / 1000);
            got = 1;
            break;
        }
        ssize_t n = read(fds[0], msg + got, sizeof msg - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* EOF: the child wrote all it had */
        got += (size_t)n;
    }
    close(fds[0]);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    if (got == 0)
        snprintf(msg, sizeof msg, "cuda: the probe process died before it "
                 "answered (the driver crashed it)");
    if (msg[0] == '\0')
        return 1;
    snprintf(reason, len, "%s", msg);
    return 0;
}
