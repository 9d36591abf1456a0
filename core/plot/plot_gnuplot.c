/* Running gnuplot: a child process on a script we wrote, never a shell, with
 * a time limit; and the quoting that keeps suite strings out of its
 * command language. */
#include "plot/plot_impl.h"

#include "proc/interrupt.h"
#include "stats/measure.h"

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
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !dlb_interrupted())
        ;
}

/* The child: its own process group (so that a timeout stops whatever the
 * program started too), stdin from the script, stderr and stdout to the
 * log (gnuplot prints nothing on stdout unless a script does), then exec. */
static void child_exec(const char *gnuplot, const char *dir, const char *script)
{
    setpgid(0, 0);
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

/* How a gnuplot that ended did, into why; DLB_GNUPLOT_OK or _FAILED. */
static int outcome(const struct dlb_plotter *p, int status, const char *script,
                   char *why, size_t why_len)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return DLB_GNUPLOT_OK;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        snprintf(why, why_len, "cannot run %s", p->gnuplot);
    else if (WIFEXITED(status))
        snprintf(why, why_len, "gnuplot failed on %s/%s (exit status %d); "
                 "see %s/gnuplot.log", p->dir, script, WEXITSTATUS(status), p->dir);
    else
        snprintf(why, why_len, "gnuplot died on %s/%s (signal %d)", p->dir,
                 script, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return DLB_GNUPLOT_FAILED;
}

/* Keep what went wrong with plot number `seq`: the reason of the first
 * plot that failed, in the order they were started whatever order they
 * ended in; once a gnuplot was stopped for its time, a warning naming
 * every plot that was, which matters more. */
static void note(struct dlb_plotter *p, int seq, const char *name, int rc,
                 const char *why)
{
    if (rc == DLB_GNUPLOT_OK)
        return;
    p->drawn = 0;
    if (rc == DLB_GNUPLOT_TIMED_OUT) {
        size_t l = strlen(p->timed_out);
        snprintf(p->timed_out + l, sizeof p->timed_out - l, "%s%s", l ? ", " : "",
                 name);
        snprintf(p->why, sizeof p->why, "gnuplot took more than %.3g s "
                 "(DLBENCH_GNUPLOT_TIMEOUT) on plot%s %s and was stopped; their "
                 "data and scripts are in %s: run `gnuplot NAME.gp` there",
                 p->timeout_s, strchr(p->timed_out, ',') ? "s" : "", p->timed_out,
                 p->dir);
    } else if (!p->timed_out[0] && (!p->why[0] || seq < p->why_seq)) {
        snprintf(p->why, sizeof p->why, "%s", why);
        p->why_seq = seq;
    }
}

/* Reap or stop job k, if it ended, ran past its deadline, or a signal
 * reached dlbench since plotting began (gnuplot, in a group of its own, no
 * longer hears the terminal's Ctrl-C itself). 1 when the job is gone. A
 * group is killed while its leader is still unreaped, so its id cannot
 * have been reused. */
static int reap(struct dlb_plotter *p, int k)
{
    struct dlb_gp_job *j = &p->jobs[k];
    char script[300], why[512];
    int status = 0, rc;
    snprintf(script, sizeof script, "%s.gp", j->name);
    pid_t r = waitpid(j->pid, &status, WNOHANG);
    if (r == 0) {
        int by_signal = dlb_interrupted() != p->sig0;
        if (!by_signal && dlb_now() < j->deadline)
            return 0;
        kill(-j->pid, SIGKILL);
        kill(j->pid, SIGKILL);
        while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR)
            ;
        if (by_signal)
            snprintf(why, sizeof why, "gnuplot on %s/%s was stopped by signal %d "
                     "to dlbench", p->dir, script, dlb_interrupted());
        else
            snprintf(why, sizeof why, "gnuplot on %s/%s took more than %.3g s and "
                     "was stopped", p->dir, script, p->timeout_s);
        rc = by_signal ? DLB_GNUPLOT_FAILED : DLB_GNUPLOT_TIMED_OUT;
    } else if (r < 0 && errno == EINTR) {
        return 0;
    } else if (r < 0) {
        snprintf(why, sizeof why, "waiting for gnuplot on %s/%s: %s", p->dir,
                 script, strerror(errno));
        rc = DLB_GNUPLOT_FAILED;
    } else {
        rc = outcome(p, status, script, why, sizeof why);
    }
    note(p, j->seq, j->name, rc, why);
    p->jobs[k] = p->jobs[--p->n_jobs];
    dlb_interrupt_child(p->n_jobs ? p->jobs[p->n_jobs - 1].pid : 0);
    return 1;
}

/* Wait until at most `left` jobs run. */
static void wait_jobs(struct dlb_plotter *p, int left)
{
    long nap_ms = 2;
    while (p->n_jobs > left) {
        int gone = 0;
        for (int k = p->n_jobs; k-- > 0;)
            gone |= reap(p, k);
        if (gone) {
            nap_ms = 2;
            continue;
        }
        /* Short naps first: most plots take a few tens of milliseconds. */
        sleep_ms(nap_ms);
        if (nap_ms < 50)
            nap_ms *= 2;
    }
}

void dlb_plotter_start(struct dlb_plotter *p, const char *name)
{
    /* One more than the cores: the plots take unequal times (the
     * step-time one most), and a core freed by a short one then goes to
     * the next at once rather than after a wait. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN) + 1;
    int most = cores < 2 ? 2 : cores > DLB_PLOT_JOBS ? DLB_PLOT_JOBS : (int)cores;
    if (!p->parallel)
        most = 1;
    wait_jobs(p, most - 1);
    char script[300], why[512];
    snprintf(script, sizeof script, "%s.gp", name);
    if (p->n_started && dlb_interrupted() != p->sig0) {
        /* Stopped while plotting: the user wants out, not more plots. */
        snprintf(why, sizeof why, "%s/%s not drawn: dlbench was stopped by "
                 "signal %d", p->dir, script, dlb_interrupted());
        note(p, p->n_started++, name, DLB_GNUPLOT_FAILED, why);
        return;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, sizeof why, "cannot start gnuplot: %s", strerror(errno));
        note(p, p->n_started++, name, DLB_GNUPLOT_FAILED, why);
        return;
    }
    if (pid == 0)
        child_exec(p->gnuplot, p->dir, script);
    /* As in the child: whichever runs first, the group exists before it
     * could be killed. */
    setpgid(pid, pid);
    if (!p->n_started)
        p->sig0 = dlb_interrupted();
    struct dlb_gp_job *j = &p->jobs[p->n_jobs++];
    j->pid = pid;
    j->seq = p->n_started++;
    j->deadline = dlb_now() + p->timeout_s;
    snprintf(j->name, sizeof j->name, "%s", name);
    /* A second signal to dlbench kills this group before dlbench dies. */
    dlb_interrupt_child(pid);
}

void dlb_plotter_wait(struct dlb_plotter *p)
{
    wait_jobs(p, 0);
}

dlb_status dlb_gnuplot_timeout(double *seconds, struct dlb_error *err)
{
    const char *v = getenv("DLBENCH_GNUPLOT_TIMEOUT");
    *seconds = DLB_GNUPLOT_TIMEOUT_S;
    if (!v || !*v)
        return DLB_OK;
    char *end;
    errno = 0;
    double s = strtod(v, &end);
    /* A day is far beyond any plot; a larger figure is a typo. */
    if (errno || end == v || *end || !(s > 0) || s > 86400)
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "DLBENCH_GNUPLOT_TIMEOUT=%s: not a number of seconds "
                          "between 0 and 86400 (the default is %d)", v,
                          DLB_GNUPLOT_TIMEOUT_S);
    *seconds = s;
    return DLB_OK;
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
    dlb_status st = dlb_gnuplot_timeout(&p->timeout_s, err);
    if (st != DLB_OK)
        return st;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", dir,
                          strerror(errno));
    p->dir = strdup(dir);
    p->rel = strdup(rel ? rel : "");
    p->drawn = 1;
    if (!p->dir || !p->rel) {
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
    dlb_plotter_wait(p); /* no gnuplot outlives its plotter */
    free(p->dir);
    free(p->rel);
    free(p->gnuplot);
    dlb_plot_list_free(&p->plots);
    memset(p, 0, sizeof *p);
}

void dlb_plot_list_free(struct dlb_plot_list *l)
{
    for (size_t i = 0; l->v && i < l->n; i++) {
        struct dlb_plot_file *f = &l->v[i];
        free(f->name);
        free(f->title);
        free(f->png);
        free(f->svg);
        free(f->data);
        free(f->script);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}
