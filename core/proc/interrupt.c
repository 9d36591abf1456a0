/* The self-pipe behind dlb_interrupted(): see interrupt.h. */
#define _POSIX_C_SOURCE 200809L

#include "proc/interrupt.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static const int caught[] = {SIGINT, SIGTERM, SIGHUP};
#define N_CAUGHT (sizeof caught / sizeof caught[0])

static volatile sig_atomic_t got_signal;
static volatile sig_atomic_t child_group; /* the configuration's, or 0 */
static int pipe_fds[2] = {-1, -1};
static struct sigaction saved[N_CAUGHT], saved_xfsz;
static int installed;

static void on_signal(int sig)
{
    int e = errno; /* the interrupted code may be about to read errno */
    if (got_signal) {
        /* The second one: out now, but not leaving the configuration's
         * processes (a group of their own) running without a parent. */
        if (child_group > 0)
            kill(-(pid_t)child_group, SIGKILL);
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        raise(sig);
        errno = e;
        return;
    }
    got_signal = sig;
    if (pipe_fds[1] >= 0) {
        char b = 1;
        /* Non-blocking: a full pipe already says what this byte would. */
        ssize_t w = write(pipe_fds[1], &b, 1);
        (void)w;
    }
    errno = e;
}

dlb_status dlb_interrupt_install(struct dlb_error *err)
{
    if (installed)
        return DLB_OK;
    if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        pipe_fds[0] = pipe_fds[1] = -1;
        return dlb_errorf(err, DLB_ERR_RUNTIME, "cannot create a pipe for "
                          "signal handling: %s", strerror(errno));
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* No SA_RESTART: a blocking call returns EINTR and the loop around it
     * looks at the flag. The handler gives a second signal the default
     * action, a way out should the orderly stop itself get stuck. */
    sa.sa_flags = 0;
    for (size_t i = 0; i < N_CAUGHT; i++) {
        /* A signal ignored on entry stays ignored: nohup and background
         * jobs of a shell rely on that. */
        sigaction(caught[i], NULL, &saved[i]);
        if (saved[i].sa_handler != SIG_IGN)
            sigaction(caught[i], &sa, NULL);
    }
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGXFSZ, &ign, &saved_xfsz);
    got_signal = 0;
    installed = 1;
    return DLB_OK;
}

void dlb_interrupt_restore(void)
{
    if (!installed)
        return;
    for (size_t i = 0; i < N_CAUGHT; i++)
        sigaction(caught[i], &saved[i], NULL);
    sigaction(SIGXFSZ, &saved_xfsz, NULL);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    pipe_fds[0] = pipe_fds[1] = -1;
    installed = 0;
}

int dlb_interrupted(void)
{
    return (int)got_signal;
}

int dlb_interrupt_fd(void)
{
    return pipe_fds[0];
}

void dlb_interrupt_child(pid_t group)
{
    child_group = (sig_atomic_t)group;
}
