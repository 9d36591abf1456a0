/* Running gnuplot: a child process on a script we wrote, never a shell, with
 * a time limit; and the quoting that keeps suite strings out of its
 * command language. */
#include "plot_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void dlb_gp_quote(const char *s, char *buf, size_t n)
{
    size_t j = 0;
    if (n < 3) {
        if (n)
            buf[0] = '\0';
        return;
    }
    buf[j++] = '\'';
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        size_t need = c == '\'' ? 2 : 1;
        if (j + need + 2 > n)
            break;
        if (c == '\'')
            buf[j++] = '\'';
        buf[j++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
    }
    buf[j++] = '\'';
    buf[j] = '\0';
}

void dlb_plot_label(FILE *f, const char *s)
{
    size_t n = strlen(s);
    fputc('"', f);
    if (!n)
        fputc('-', f); /* an empty label would read as a missing column */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        /* A label wider than the canvas pushes the plot off it: cut, at
         * a character boundary, and say so. */
        if (i >= DLB_PLOT_LABEL_MAX && (c & 0xc0) != 0x80) {
            fputs("...", f);
            break;
        }
        if (c == '"')
            c = '\'';
        else if (c < 0x20 || c == 0x7f)
            c = ' ';
        fputc(c, f);
    }
    fputc('"', f);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The child: stdin from the script, stderr to the log, stdout to the log
 * too (gnuplot prints nothing there unless a script does), then exec. */
static void child_exec(const char *gnuplot, const char *dir, const char *script)
{
    if (chdir(dir) != 0)
        _exit(126);
    int in = open(script, O_RDONLY | O_CLOEXEC);
    int log = open("gnuplot.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (in < 0 || log < 0 || dup2(in, 0) < 0 || dup2(log, 1) < 0 ||
        dup2(log, 2) < 0)
        _exit(126);
    /* "-" would also read stdin; with no argument gnuplot does, and it
     * treats the input as a script because stdin is not a terminal. */
    char *const argv[] = {(char *)gnuplot, NULL};
    execvp(gnuplot, argv);
    _exit(127);
}

int dlb_gnuplot_run(const char *gnuplot, const char *dir, const char *script,
                    int timeout_s, char *why, size_t why_len)
{
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, why_len, "cannot start gnuplot: %s", strerror(errno));
        return -1;
    }
    if (pid == 0)
        child_exec(gnuplot, dir, script);
    int status = 0;
    long waited_ms = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            snprintf(why, why_len, "waiting for gnuplot: %s", strerror(errno));
            return -1;
        }
        if (waited_ms >= (long)timeout_s * 1000) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            snprintf(why, why_len, "gnuplot on %s/%s took more than %d s and "
                     "was stopped", dir, script, timeout_s);
            return -1;
        }
        sleep_ms(waited_ms < 200 ? 5 : 50);
        waited_ms += waited_ms < 200 ? 5 : 50;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        snprintf(why, why_len, "cannot run %s", gnuplot);
    else if (WIFEXITED(status))
        snprintf(why, why_len, "gnuplot failed on %s/%s (exit status %d); "
                 "see %s/gnuplot.log", dir, script, WEXITSTATUS(status), dir);
    else
        snprintf(why, why_len, "gnuplot died on %s/%s (signal %d)", dir,
                 script, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return -1;
}

/* The program to run, or NULL: a name with a '/' is taken as it is, a bare
 * name is looked up in $PATH (as execvp will). */
static char *find_gnuplot(void)
{
    const char *prog = getenv("DLBENCH_GNUPLOT");
    if (!prog || !*prog)
        prog = "gnuplot";
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0 ? strdup(prog) : NULL;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        size_t len = strcspn(path, ":");
        char cand[4096];
        int w = snprintf(cand, sizeof cand, "%.*s/%s", (int)len,
                         len ? path : ".", prog);
        if (w > 0 && (size_t)w < sizeof cand && access(cand, X_OK) == 0)
            return strdup(prog);
        path += len;
        if (*path == ':')
            path++;
    }
    return NULL;
}

dlb_status dlb_plotter_init(struct dlb_plotter *p, const char *dir,
                            const char *rel, struct dlb_error *err)
{
    memset(p, 0, sizeof *p);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", dir,
                          strerror(errno));
    p->dir = strdup(dir);
    p->rel = strdup(rel ? rel : "");
    p->plots = json_array();
    p->drawn = 1;
    if (!p->dir || !p->rel || !p->plots) {
        dlb_plotter_free(p);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    p->gnuplot = find_gnuplot();
    if (!p->gnuplot) {
        p->drawn = 0;
        snprintf(p->why, sizeof p->why,
                 "gnuplot not found, so %s holds each plot's data and script "
                 "but no images; install it (apt-get install gnuplot-nox) and "
                 "run `gnuplot NAME.gp` there", dir);
    }
    return DLB_OK;
}

void dlb_plotter_free(struct dlb_plotter *p)
{
    free(p->dir);
    free(p->rel);
    free(p->gnuplot);
    json_decref(p->plots);
    memset(p, 0, sizeof *p);
}
