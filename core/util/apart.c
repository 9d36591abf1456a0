/* Work in a forked copy of the process (apart.h). */
#include "util/apart.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int dlb_apart_possible(void)
{
    DIR *d = opendir("/proc/self/task");
    int threads = 0;
    if (!d)
        return 0; /* cannot tell: not apart */
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        threads += e->d_name[0] != '.';
    closedir(d);
    return threads == 1;
}

/* What the copy sends back: its status, then its message. */
struct answer {
    int status;
    char msg[sizeof ((struct dlb_error *)0)->msg];
};

static void write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* the parent reads a short answer and says so */
        p += n;
        len -= (size_t)n;
    }
}

static size_t read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, p + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return got;
}

static void run_copy(int fd, dlb_apart_fn fn, void *ctx)
{
    struct answer a;
    struct dlb_error e = {""};
    memset(&a, 0, sizeof a);
    a.status = (int)fn(ctx, &e);
    memcpy(a.msg, e.msg, sizeof a.msg);
    write_all(fd, &a, sizeof a);
    /* stderr is unbuffered; what the work printed on stdout goes too. No
     * exit handlers: they are the measuring process's. */
    fflush(stdout);
    _exit(0);
}

dlb_status dlb_apart_run(dlb_apart_fn fn, void *ctx, struct dlb_error *err)
{
    int fds[2], wst = 0;
    struct answer a;
    if (pipe(fds) != 0)
        return dlb_errorf(err, DLB_ERR_RUNTIME, "pipe: %s", strerror(errno));
    /* what is buffered would be written twice, by each process */
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return dlb_errorf(err, DLB_ERR_RUNTIME, "fork: %s", strerror(e));
    }
    if (pid == 0) {
        close(fds[0]);
        run_copy(fds[1], fn, ctx);
    }
    close(fds[1]);
    size_t got = read_all(fds[0], &a, sizeof a);
    close(fds[0]);
    while (waitpid(pid, &wst, 0) < 0) {
        if (errno != EINTR)
            return dlb_errorf(err, DLB_ERR_RUNTIME, "waitpid: %s",
                              strerror(errno));
    }
    if (WIFSIGNALED(wst))
        return dlb_errorf(err, DLB_ERR_RUNTIME, "the process working apart "
                          "(pid %d) was killed by signal %d (%s)", (int)pid,
                          WTERMSIG(wst), strsignal(WTERMSIG(wst)));
    if (got != sizeof a || a.status < DLB_OK || a.status > DLB_ERR_INTERNAL)
        return dlb_errorf(err, DLB_ERR_RUNTIME, "the process working apart "
                          "(pid %d) ended without an answer (exit status %d)",
                          (int)pid, WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
    if (a.status != DLB_OK) {
        a.msg[sizeof a.msg - 1] = '\0';
        return dlb_errorf(err, (dlb_status)a.status, "%s", a.msg);
    }
    return DLB_OK;
}
