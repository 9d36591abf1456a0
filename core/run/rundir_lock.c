/* One process at a time in a run directory: two runs given the same --out
 * would interleave their journals and rename each other's files away. The
 * lock is flock(2) on DIR/.lock, which the kernel drops when the holder
 * exits however it ends, so a killed run leaves no stale lock to clear
 * before --resume; the file keeps the holder's pid for the message. */
#define _DEFAULT_SOURCE

#include "results/results.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* Held for the life of the process; one run directory per process. */
static int lock_fd = -1;

dlb_status dlb_rundir_lock(const char *dir, struct dlb_error *err)
{
    if (lock_fd >= 0)
        return DLB_OK;
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/" DLB_RUNDIR_LOCK, dir) >= sizeof path)
        return dlb_errorf(err, DLB_ERR_INPUT, "run directory name too long: %s", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", path,
                          strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        close(fd);
        if (e != EWOULDBLOCK)
            return dlb_errorf(err, DLB_ERR_IO, "cannot lock %s: %s", path,
                              strerror(e));
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "run directory %s is in use by dlbench process %s "
                          "(it holds %s); wait for that run to end or choose "
                          "another --out", dir, *pid ? pid : "(unknown pid)", path);
    }
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != len) {
        int e = errno;
        close(fd);
        return dlb_errorf(err, DLB_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    lock_fd = fd;
    return DLB_OK;
}
