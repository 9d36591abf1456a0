/* Configurations run as several processes: see launcher.h. */
#include "proc/launcher.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stats/measure.h"

/* How long a launcher gets to stop its ranks on SIGTERM: mpirun kills
 * each rank's process group (ranks do not share the launcher's), so
 * SIGKILL to the launcher alone would leave them running. */
#define LAUNCHER_GRACE_S 5.0

int dlb_launch_ranks(const struct dlb_plan *p, const struct dlb_config *c)
{
    int ranks = 1;
    for (unsigned ns = 1; ns < p->suite->n_ns; ns++) {
        const struct dlb_ns *n = &p->suite->ns[ns];
        if (!n->plugin || !(n->plugin->caps & DLB_PLUGIN_MULTI_PROCESS) ||
            !dlb_config_plugin_enabled(p, c, ns))
            continue;
        for (unsigned k = 0; k < n->n; k++)
            if (!strcmp(n->defs[k].name, "ranks") &&
                n->defs[k].type == DLB_PARAM_INT && c->values[ns][k].i > ranks)
                ranks = (int)c->values[ns][k].i;
    }
    return ranks;
}

static int add_arg(char ***v, size_t *n, const char *text, size_t len)
{
    char **nv = realloc(*v, (*n + 2) * sizeof *nv);
    if (!nv)
        return -1;
    *v = nv;
    if (!(nv[*n] = strndup(text, len)))
        return -1;
    nv[++*n] = NULL;
    return 0;
}

/* One word with {ranks} replaced. */
static int add_word(char ***v, size_t *n, const char *w, size_t len, int ranks,
                    int *seen)
{
    char buf[1024];
    size_t o = 0;
    for (size_t i = 0; i < len && o + 16 < sizeof buf;) {
        if (len - i >= 7 && !strncmp(w + i, "{ranks}", 7)) {
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%d", ranks);
            i += 7;
            *seen = 1;
        } else {
            buf[o++] = w[i++];
        }
    }
    return add_arg(v, n, buf, o);
}

static dlb_status default_argv(int ranks, char ***out, struct dlb_error *err)
{
    char np[16];
    size_t n = 0;
    int bad = 0;
    snprintf(np, sizeof np, "%d", ranks);
    bad |= add_arg(out, &n, "mpirun", 6);
    /* Open MPI refuses root without it; CI containers run as root. */
    if (geteuid() == 0)
        bad |= add_arg(out, &n, "--allow-run-as-root", 19);
    /* More ranks than cores is a valid (slow) configuration. */
    bad |= add_arg(out, &n, "--oversubscribe", 15);
    bad |= add_arg(out, &n, "-np", 3);
    bad |= add_arg(out, &n, np, strlen(np));
    if (bad) {
        dlb_launcher_argv_free(*out);
        *out = NULL;
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    return DLB_OK;
}

dlb_status dlb_launcher_argv(const char *cmd, int ranks, char ***out,
                             struct dlb_error *err)
{
    size_t n = 0;
    int seen = 0, bad = 0;
    *out = NULL;
    if (!cmd || !cmd[strspn(cmd, " \t")])
        return default_argv(ranks, out, err);
    for (const char *p = cmd; *p && !bad;) {
        p += strspn(p, " \t");
        if (!*p)
            break;
        char q = (*p == '"' || *p == '\'') ? *p++ : 0;
        const char *end = q ? strchr(p, q) : p + strcspn(p, " \t");
        if (!end) {
            dlb_launcher_argv_free(*out);
            *out = NULL;
            return dlb_errorf(err, DLB_ERR_INPUT, "launcher \"%s\": a quote is "
                              "not closed", cmd);
        }
        bad |= add_word(out, &n, p, (size_t)(end - p), ranks, &seen);
        p = end + (q ? 1 : 0);
    }
    if (!bad && !seen) {
        dlb_launcher_argv_free(*out);
        *out = NULL;
        return dlb_errorf(err, DLB_ERR_INPUT, "launcher \"%s\" does not say "
                          "where the rank count goes: write {ranks}, e.g. "
                          "\"srun -n {ranks}\" or \"mpirun -np {ranks} "
                          "--hostfile hosts\"", cmd);
    }
    if (bad || !*out) {
        dlb_launcher_argv_free(*out);
        *out = NULL;
        return dlb_errorf(err, bad ? DLB_ERR_NOMEM : DLB_ERR_INPUT,
                          bad ? "out of memory" : "launcher \"%s\" is empty",
                          cmd);
    }
    return DLB_OK;
}

void dlb_launcher_argv_free(char **argv)
{
    for (char **a = argv; a && *a; a++)
        free(*a);
    free(argv);
}

/* Open MPI, MPICH/Hydra and Slurm's PMI-2 and PMIx set these in every
 * process they start. */
static const char *const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                        "PMIX_RANK", NULL};
static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                                        "PMI_RANK", "SLURM_PROCID", NULL};

int dlb_launched(const char **what)
{
    for (const char *const *v = size_vars; *v; v++)
        if (getenv(*v)) {
            if (what)
                *what = *v;
            return 1;
        }
    return 0;
}

int dlb_launch_env_rank(void)
{
    for (const char *const *v = rank_vars; *v; v++) {
        const char *s = getenv(*v);
        if (s && *s)
            return atoi(s);
    }
    return 0;
}

int dlb_record_file_write(const char *path, int rank, json_t *rec)
{
    char tmp[4096];
    if (rank != 0)
        return 0;
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return -1;
    if (json_dump_file(rec, tmp, JSON_COMPACT) != 0)
        return -1;
    return rename(tmp, path) == 0 ? 0 : -1;
}

json_t *dlb_record_file_read(const char *path)
{
    json_error_t jerr;
    return json_load_file(path, 0, &jerr);
}

/* Open MPI 4: "mpirun noticed that process rank 1 with PID 7 on node vm
 * exited on signal 9 (Killed)."; "MPI_ABORT was invoked on rank 1 in
 * communicator MPI_COMM_WORLD\nwith errorcode 7."; "The first process to
 * do so was:\n\n  Process name: [[17718,1],1]\n  Exit code:    3".
 * Slurm: "srun: error: node3: task 1: Killed". */
static int explain_line(const char *line, int *pending_rank, char *out,
                        size_t len, int *by_signal)
{
    int rank, sig, code, job, step;
    char node[128], what[128];
    const char *p;
    if ((p = strstr(line, "noticed that process rank ")) &&
        sscanf(p, "noticed that process rank %d with PID %*d on node %127s "
               "exited on signal %d (%127[^)])", &rank, node, &sig, what) == 4) {
        snprintf(out, len, "rank %d (host %s) was killed by signal %d (%s)",
                 rank, node, sig, what);
        *by_signal = 1;
        return 1;
    }
    if ((p = strstr(line, "MPI_ABORT was invoked on rank ")) &&
        sscanf(p, "MPI_ABORT was invoked on rank %d", &rank) == 1) {
        snprintf(out, len, "rank %d called MPI_Abort", rank);
        return 1;
    }
    if ((p = strstr(line, "Process name: [[")) &&
        sscanf(p, "Process name: [[%d,%d],%d]", &job, &step, &rank) == 3)
        *pending_rank = rank;
    if (*pending_rank >= 0 && (p = strstr(line, "Exit code:")) &&
        sscanf(p, "Exit code: %d", &code) == 1) {
        snprintf(out, len, "rank %d exited with status %d", *pending_rank,
                 code);
        return 1;
    }
    if ((p = strstr(line, "srun: error: ")) &&
        sscanf(p, "srun: error: %127[^:]: task %d: %127[^\n]", node, &rank,
               what) == 3) {
        snprintf(out, len, "rank %d (host %s): %s", rank, node, what);
        *by_signal = strstr(what, "Exited") == NULL;
        return 1;
    }
    return 0;
}

/* A rank that gives up on the job says why before it stops the others
 * (the dp plugin: "dp: error: rank 1 of 2 (host vm): WHY; stopping every
 * rank"): its own words beat the launcher's. */
static int own_words(const char *line, char *out, size_t len)
{
    const char *p = strstr(line, "rank ");
    int rank, size, used = 0;
    if (!p || sscanf(p, "rank %d of %d%n", &rank, &size, &used) != 2 ||
        !strstr(p, "stopping every rank"))
        return 0;
    snprintf(out, len, "%.*s", (int)strcspn(p, "\n"), p);
    return 1;
}

void dlb_launcher_explain(const char *log_path, char *out, size_t len,
                          int *by_signal)
{
    char line[1024], launcher[512] = "";
    int pending = -1, sig = 0, found = 0;
    out[0] = '\0';
    *by_signal = 0;
    FILE *f = log_path ? fopen(log_path, "r") : NULL;
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        if (!out[0] && own_words(line, out, len))
            continue;
        if (!found)
            found = explain_line(line, &pending, launcher, sizeof launcher, &sig);
    }
    fclose(f);
    if (!out[0]) {
        snprintf(out, len, "%s", launcher);
        *by_signal = sig;
    }
}

/* Up to `max` direct children of `pid`, from /proc, appended to out[*n]
 * unless there already. */
static void children_of(pid_t pid, pid_t *out, size_t *n, size_t max)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL && *n < max) {
        char path[64], buf[512];
        long ppid = 0;
        pid_t p = (pid_t)strtol(e->d_name, NULL, 10);
        if (p <= 0)
            continue;
        snprintf(path, sizeof path, "/proc/%d/stat", (int)p);
        FILE *f = fopen(path, "r");
        size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[got] = '\0';
        /* "PID (COMM) STATE PPID ...": COMM may hold blanks and parens. */
        const char *rp = strrchr(buf, ')');
        if (!rp || sscanf(rp + 1, " %*c %ld", &ppid) != 1 || ppid != pid)
            continue;
        size_t k = 0;
        while (k < *n && out[k] != p)
            k++;
        if (k == *n)
            out[(*n)++] = p;
    }
    if (d)
        closedir(d);
}

void dlb_launcher_stop(pid_t pid, int graceful)
{
    /* mpirun puts every rank in a process group of its own: the group
     * kill below misses them, and a launcher that is itself killed before
     * it has stopped them (a loaded machine, a rank that is stopped or
     * spinning in a collective) leaves them running for ever, a spinning
     * rank taking a core from every later configuration. So its children
     * are noted now, while they are still its own, and killed with it. */
    pid_t kids[256];
    size_t n = 0;
    if (graceful)
        children_of(pid, kids, &n, sizeof kids / sizeof kids[0]);
    if (graceful) {
        kill(-pid, SIGTERM);
        kill(pid, SIGTERM);
        for (double end = dlb_now() + LAUNCHER_GRACE_S; dlb_now() < end;) {
            siginfo_t si;
            si.si_pid = 0;
            if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT | WNOHANG) == 0 &&
                si.si_pid == pid)
                break;
            usleep(10000);
        }
        children_of(pid, kids, &n, sizeof kids / sizeof kids[0]);
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    /* Ranks that outlive their launcher keep their pids; one that ended
     * in these few seconds has its pid free, and pids are not reused that
     * soon. */
    for (size_t k = 0; k < n; k++)
        kill(kids[k], SIGKILL);
}
