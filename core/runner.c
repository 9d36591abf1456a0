#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure.h"

char *dlb_self_exe(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    return strdup(buf);
}

/* The last non-empty line of the child's log, to explain a death. */
static void log_tail(const char *path, char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0])
            snprintf(out, len, "%s", line);
    }
    fclose(f);
}

static void child_exec(const struct dlb_child_spec *spec, const char *exe, int wfd)
{
    int lfd = spec->log_path ? open(spec->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                             : -1;
    if (lfd >= 0) {
        dup2(lfd, STDOUT_FILENO);
        dup2(lfd, STDERR_FILENO);
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0)
        dup2(devnull, STDIN_FILENO);
    /* A fresh process group, so a timeout kills everything the
     * configuration started (MPI launchers, helper processes). */
    setpgid(0, 0);
    char fdbuf[16];
    snprintf(fdbuf, sizeof fdbuf, "%d", wfd);
    /* The caller leaves a "%FD%" placeholder for the record descriptor. */
    for (char **a = spec->argv; *a; a++)
        if (!strcmp(*a, "%FD%"))
            *a = fdbuf;
    execv(exe, spec->argv);
    fprintf(stderr, "dlbench: cannot exec %s: %s\n", exe, strerror(errno));
    _exit(127);
}

/* Read everything the child writes until EOF or the deadline. */
static int read_until(int fd, pid_t pid, double deadline, char **buf, size_t *len,
                      int *timed_out)
{
    size_t cap = 0;
    for (;;) {
        int wait_ms = -1;
        if (deadline > 0) {
            double left = deadline - dlb_now();
            if (left <= 0) {
                *timed_out = 1;
                kill(-pid, SIGKILL);
                kill(pid, SIGKILL);
                return 0;
            }
            wait_ms = left > 1.0 ? 1000 : (int)(left * 1000) + 1;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, wait_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            continue;
        if (*len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 65536;
            char *nb = realloc(*buf, cap);
            if (!nb)
                return -1;
            *buf = nb;
        }
        ssize_t n = read(fd, *buf + *len, cap - *len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0; /* EOF: the child closed its end or died */
        *len += (size_t)n;
        (*buf)[*len] = '\0';
    }
}

static void classify(json_t **record, int wstatus, int timed_out, double timeout_s,
                     const char *tail)
{
    char reason[768];
    const char *status;
    if (timed_out) {
        status = "timeout";
        snprintf(reason, sizeof reason, "still running after the %.3g s timeout; killed",
                 timeout_s);
    } else if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        /* Nobody here sent SIGKILL: the kernel's OOM killer is the usual
         * sender. */
        status = sig == SIGKILL ? "oom" : "crashed";
        snprintf(reason, sizeof reason, "killed by signal %d (%s)%s%s", sig, strsignal(sig),
                 sig == SIGKILL ? ", probably by the kernel's OOM killer" : "",
                 "");
    } else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == DLB_CHILD_EXIT_OOM) {
        status = "oom";
        snprintf(reason, sizeof reason, "out of memory");
    } else if (*record && !(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)) {
        /* It reported, then exited badly: a sanitizer's leak or error
         * report at exit, or a crash in teardown. The figures may be fine,
         * but the run is not. */
        status = "failed";
        snprintf(reason, sizeof reason, "exited with status %d after reporting",
                 WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
    } else if (*record) {
        /* The child reported. A failure's own words are in its log: add
         * the last line unless the reason has it already. */
        const char *st = json_string_value(json_object_get(*record, "status"));
        const char *why = json_string_value(json_object_get(*record, "reason"));
        if (st && strcmp(st, "ok") && strcmp(st, "skipped") && tail[0] && why &&
            !strstr(why, tail)) {
            snprintf(reason, sizeof reason, "%s; last output: %s", why, tail);
            json_object_set_new(*record, "reason", json_string(reason));
        }
        return;
    } else {
        status = "failed";
        snprintf(reason, sizeof reason, "exited with status %d without a result",
                 WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
    }
    if (tail && tail[0]) {
        size_t l = strlen(reason);
        snprintf(reason + l, sizeof reason - l, "; last output: %s", tail);
    }
    if (!*record)
        *record = json_object();
    json_object_set_new(*record, "status", json_string(status));
    json_object_set_new(*record, "reason", json_string(reason));
}

dlb_status dlb_runner_run(const struct dlb_child_spec *spec, json_t **record,
                          struct dlb_error *err)
{
    *record = NULL;
    char *exe = dlb_self_exe();
    if (!exe)
        return dlb_errorf(err, DLB_ERR_RUNTIME, "cannot find the dlbench executable: %s",
                          strerror(errno));
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        free(exe);
        return dlb_errorf(err, DLB_ERR_RUNTIME, "pipe: %s", strerror(errno));
    }
    double start = dlb_now();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        free(exe);
        return dlb_errorf(err, DLB_ERR_RUNTIME, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        /* The write end must survive exec; the read end must not. */
        int wfd = dup(fds[1]);
        child_exec(spec, exe, wfd);
    }
    free(exe);
    close(fds[1]);

    char *buf = NULL;
    size_t len = 0;
    int timed_out = 0;
    double deadline = spec->timeout_s > 0 ? start + spec->timeout_s : 0;
    read_until(fds[0], pid, deadline, &buf, &len, &timed_out);
    close(fds[0]);
    /* The child may still run after closing its end: wait for it under
     * the same deadline, without reaping it yet (WNOWAIT) so that its
     * process group id stays reserved while we kill what it left behind. */
    for (;;) {
        siginfo_t si;
        si.si_pid = 0;
        int w = waitid(P_PID, (id_t)pid, &si,
                       WEXITED | WNOWAIT | (deadline > 0 ? WNOHANG : 0));
        if (w == 0 && si.si_pid == pid)
            break;
        if (w < 0 && errno != EINTR)
            break;
        if (deadline > 0 && dlb_now() > deadline && !timed_out) {
            timed_out = 1;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
        }
        if (deadline > 0)
            usleep(2000);
    }
    kill(-pid, SIGKILL); /* anything the configuration left behind */
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
        ;
    double wall = dlb_now() - start;

    if (buf && len > 0 && !timed_out) {
        json_error_t jerr;
        *record = json_loadb(buf, len, 0, &jerr);
    }
    free(buf);
    char tail[512];
    log_tail(spec->log_path, tail, sizeof tail);
    classify(record, wstatus, timed_out, spec->timeout_s, tail);
    json_object_set_new(*record, "wall_s", json_real(wall));
    return DLB_OK;
}
