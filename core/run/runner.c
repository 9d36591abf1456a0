#include "run/runner.h"

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

#include "proc/interrupt.h"
#include "proc/launcher.h"
#include "results/record.h"
#include "stats/measure.h"

/* After SIGINT/SIGTERM reached dlbench, how long the configuration's
 * processes get to end on SIGTERM (an MPI launcher stops its ranks) before
 * SIGKILL. */
#define STOP_GRACE_S 2.0

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
    /* The parent runs no threads, so its environment may change here. */
    if (spec->omp_passive && !getenv("OMP_WAIT_POLICY"))
        setenv("OMP_WAIT_POLICY", "passive", 1);
    char fdbuf[16];
    snprintf(fdbuf, sizeof fdbuf, "%d", wfd);
    /* The caller leaves a "%FD%" placeholder for the record descriptor. */
    for (char **a = spec->argv; *a; a++)
        if (!strcmp(*a, "%FD%"))
            *a = fdbuf;
    if (spec->launcher) {
        /* launcher words, then dlbench and its arguments */
        size_t nl = 0, na = 0;
        while (spec->launcher[nl])
            nl++;
        while (spec->argv[na])
            na++;
        char **av = calloc(nl + na + 1, sizeof *av);
        if (av) {
            memcpy(av, spec->launcher, nl * sizeof *av);
            av[nl] = (char *)exe;
            memcpy(av + nl + 1, spec->argv + 1, na * sizeof *av);
            execvp(av[0], av);
        }
        fprintf(stderr, "dlbench: cannot start the launcher %s: %s\n",
                spec->launcher[0], strerror(errno));
        _exit(127);
    }
    execv(exe, spec->argv);
    fprintf(stderr, "dlbench: cannot exec %s: %s\n", exe, strerror(errno));
    _exit(127);
}

/* Read everything the child writes until EOF, the deadline or a signal
 * to dlbench (which sends SIGTERM to the child's group and sets
 * *interrupted). */
static int read_until(int fd, pid_t pid, double deadline, char **buf, size_t *len,
                      int *timed_out, int *interrupted)
{
    size_t cap = 0;
    for (;;) {
        int wait_ms = -1;
        if (deadline > 0) {
            double left = deadline - dlb_now();
            if (left <= 0) {
                *timed_out = 1; /* the caller stops the child */
                return 0;
            }
            wait_ms = left > 1.0 ? 1000 : (int)(left * 1000) + 1;
        }
        struct pollfd p[2] = {{fd, POLLIN, 0}, {dlb_interrupt_fd(), POLLIN, 0}};
        int r = poll(p, p[1].fd >= 0 ? 2 : 1, wait_ms);
        if (dlb_interrupted()) {
            *interrupted = 1;
            kill(-pid, SIGTERM);
            kill(pid, SIGTERM);
            return 0;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0 || !(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
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
    enum dlb_rec_status status;
    if (timed_out) {
        status = DLB_REC_TIMEOUT;
        snprintf(reason, sizeof reason, "still running after the %.3g s timeout; killed",
                 timeout_s);
    } else if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        /* Nobody here sent SIGKILL: the kernel's OOM killer is the usual
         * sender. */
        status = sig == SIGKILL ? DLB_REC_OOM : DLB_REC_CRASHED;
        snprintf(reason, sizeof reason, "killed by signal %d (%s)%s%s", sig, strsignal(sig),
                 sig == SIGKILL ? ", probably by the kernel's OOM killer" : "",
                 "");
    } else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == DLB_CHILD_EXIT_OOM) {
        status = DLB_REC_OOM;
        snprintf(reason, sizeof reason, "out of memory");
    } else if (*record && !(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)) {
        /* It reported, then exited badly: a sanitizer's leak or error
         * report at exit, or a crash in teardown. The figures may be fine,
         * but the run is not. */
        status = DLB_REC_FAILED;
        snprintf(reason, sizeof reason, "exited with status %d after reporting",
                 WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
    } else if (*record) {
        /* The child reported. A failure's own words are in its log: add
         * the last line unless the reason has it already. */
        int st = dlb_rec_status_of(*record);
        const char *why = dlb_rec_reason_of(*record);
        if (st >= 0 && st != DLB_REC_OK && st != DLB_REC_SKIPPED && tail[0] && why &&
            !strstr(why, tail)) {
            snprintf(reason, sizeof reason, "%s; last output: %s", why, tail);
            dlb_rec_set_outcome(*record, (enum dlb_rec_status)st, reason);
        }
        return;
    } else {
        status = DLB_REC_FAILED;
        snprintf(reason, sizeof reason, "exited with status %d without a result",
                 WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
    }
    if (tail && tail[0]) {
        size_t l = strlen(reason);
        snprintf(reason + l, sizeof reason - l, "; last output: %s", tail);
    }
    if (!*record)
        *record = json_object();
    if (*record)
        dlb_rec_set_outcome(*record, status, reason);
}

/* A launcher's words on the rank that died lead the reason: the last
 * line of its log is usually a banner of dashes. */
static void name_dead_rank(json_t *record, const char *log_path)
{
    int st = dlb_rec_status_of(record);
    const char *why = dlb_rec_reason_of(record);
    char dead[512], reason[1024];
    int by_signal = 0;
    if (st < 0 || st == DLB_REC_OK || st == DLB_REC_SKIPPED)
        return;
    dlb_launcher_explain(log_path, dead, sizeof dead, &by_signal);
    if (!dead[0])
        return;
    snprintf(reason, sizeof reason, "%s; the launcher ended the other ranks "
             "(%s)", dead, why ? why : dlb_rec_status_name((enum dlb_rec_status)st));
    dlb_rec_set_outcome(record, by_signal ? DLB_REC_CRASHED : (enum dlb_rec_status)st,
                        reason);
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
    /* The child makes its own group too (child_exec); doing it here as
     * well closes the window before it runs. */
    setpgid(pid, pid);
    dlb_interrupt_child(pid);
    if (spec->started)
        spec->started(spec->started_ctx);

    char *buf = NULL;
    size_t len = 0;
    int timed_out = 0, interrupted = 0;
    double deadline = spec->timeout_s > 0 ? start + spec->timeout_s : 0;
    read_until(fds[0], pid, deadline, &buf, &len, &timed_out, &interrupted);
    if (timed_out)
        dlb_launcher_stop(pid, spec->launcher != NULL);
    if (interrupted)
        deadline = dlb_now() + STOP_GRACE_S;
    close(fds[0]);
    /* The child may still run after closing its end: wait for it under
     * the same deadline, without reaping it yet (WNOWAIT) so that its
     * process group id stays reserved while we kill what it left behind. */
    useconds_t nap_us = 50;
    for (;;) {
        siginfo_t si;
        si.si_pid = 0;
        int w = waitid(P_PID, (id_t)pid, &si,
                       WEXITED | WNOWAIT | (deadline > 0 ? WNOHANG : 0));
        if (w == 0 && si.si_pid == pid)
            break;
        if (w < 0 && errno != EINTR)
            break;
        if (!interrupted && dlb_interrupted()) {
            interrupted = 1;
            kill(-pid, SIGTERM);
            kill(pid, SIGTERM);
            deadline = dlb_now() + STOP_GRACE_S;
            continue;
        }
        if (deadline > 0 && dlb_now() > deadline && !timed_out) {
            timed_out = 1;
            dlb_launcher_stop(pid, spec->launcher != NULL);
        }
        /* The child closed its end, so it is most likely exiting: look
         * again soon, then less often (a child that closed the pipe and
         * lives on is the rare case the deadline is for). */
        if (deadline > 0) {
            usleep(nap_us);
            if (nap_us < 2000)
                nap_us *= 2;
        }
    }
    kill(-pid, SIGKILL); /* anything the configuration left behind */
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
        ;
    dlb_interrupt_child(0);
    double wall = dlb_now() - start;

    if (interrupted) {
        /* Stopped half-way, its figures mean nothing: no record, so that
         * --resume runs it again. */
        free(buf);
        return dlb_errorf(err, DLB_ERR_RUNTIME, "stopped by signal %d (%s) to "
                          "dlbench", dlb_interrupted(), strsignal(dlb_interrupted()));
    }
    if (buf && len > 0 && !timed_out) {
        json_error_t jerr;
        *record = json_loadb(buf, len, 0, &jerr);
    }
    free(buf);
    if (!*record && spec->record_path && !timed_out)
        *record = dlb_record_file_read(spec->record_path);
    char tail[512];
    log_tail(spec->log_path, tail, sizeof tail);
    classify(record, wstatus, timed_out, spec->timeout_s, tail);
    if (spec->launcher && !timed_out)
        name_dead_rank(*record, spec->log_path);
    json_object_set_new(*record, "wall_s", json_real(wall));
    return DLB_OK;
}
