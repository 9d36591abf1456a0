/* Running what a bisection needs: sh commands, git, a run's figure. */
#include "cli/bisect_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "results/results.h"

static int redirect(const char *path, int fd)
{
    if (!path)
        return 0;
    int f = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f < 0)
        return -1;
    int rc = dup2(f, fd) < 0 ? -1 : 0;
    close(f);
    return rc;
}

int dlb_sh(const char *cmd, const char *cwd, const char *const *env,
           const char *out_path, const char *err_path)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        for (const char *const *e = env; e && *e; e++)
            putenv((char *)*e);
        if ((cwd && chdir(cwd) != 0) || redirect(out_path, 1) || redirect(err_path, 2))
            _exit(127);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

char *dlb_git(const char *repo, const char *const *args, struct dlb_error *err)
{
    int out[2], errp[2];
    if (pipe(out) != 0 || pipe(errp) != 0) {
        dlb_errorf(err, DLB_ERR_IO, "git: cannot make a pipe: %s", strerror(errno));
        return NULL;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(errp[1], 2);
        close(out[0]);
        close(errp[0]);
        const char *argv[32] = {"git", "-C", repo};
        size_t n = 3;
        for (const char *const *a = args; *a && n < 31; a++)
            argv[n++] = *a;
        argv[n] = NULL;
        execvp("git", (char *const *)argv);
        _exit(127);
    }
    close(out[1]);
    close(errp[1]);
    char *text = NULL, emsg[512] = "";
    size_t len = 0, elen = 0;
    char buf[4096];
    ssize_t k;
    while ((k = read(out[0], buf, sizeof buf)) > 0) {
        char *t = realloc(text, len + (size_t)k + 1);
        if (!t)
            break;
        text = t;
        memcpy(text + len, buf, (size_t)k);
        len += (size_t)k;
    }
    while ((k = read(errp[0], emsg + elen, sizeof emsg - 1 - elen)) > 0)
        elen += (size_t)k;
    emsg[elen] = '\0';
    close(out[0]);
    close(errp[0]);
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
        while (elen && (emsg[elen - 1] == '\n' || emsg[elen - 1] == ' '))
            emsg[--elen] = '\0';
        dlb_errorf(err, DLB_ERR_INPUT, "git -C %s %s: %s", repo, args[0],
                   pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 127 && !elen
                   ? "git not found (apt-get install git)" : elen ? emsg : "failed");
        free(text);
        return NULL;
    }
    if (!text && !(text = calloc(1, 1)))
        return NULL;
    text[len] = '\0';
    while (len && text[len - 1] == '\n')
        text[--len] = '\0';
    return text;
}

dlb_status dlb_bisect_range(const char *repo, const char *good, const char *bad,
                            char ***shas, size_t *n_shas, struct dlb_error *err)
{
    char gspec[512], bspec[512], range[1100];
    *shas = NULL;
    *n_shas = 0;
    snprintf(gspec, sizeof gspec, "%s^{commit}", good);
    snprintf(bspec, sizeof bspec, "%s^{commit}", bad);
    const char *g_args[] = {"rev-parse", "--verify", "--quiet", gspec, NULL};
    const char *b_args[] = {"rev-parse", "--verify", "--quiet", bspec, NULL};
    char *g = dlb_git(repo, g_args, err), *b = g ? dlb_git(repo, b_args, err) : NULL;
    if (!g || !b) {
        free(g);
        free(b);
        return dlb_errorf(err, DLB_ERR_INPUT, "%s is not a commit of %s (%s)",
                          g ? bad : good, repo, err->msg);
    }
    const char *anc[] = {"merge-base", "--is-ancestor", g, b, NULL};
    char *yes = dlb_git(repo, anc, err);
    snprintf(range, sizeof range, "%s..%s", g, b);
    const char *list[] = {"rev-list", "--first-parent", "--reverse", range, NULL};
    char *text = yes ? dlb_git(repo, list, err) : NULL;
    dlb_status s = DLB_OK;
    if (!yes)
        s = dlb_errorf(err, DLB_ERR_INPUT, "GOOD %s is not an ancestor of BAD %s: give the "
                       "older commit first", good, bad);
    else if (!text || !*text)
        s = dlb_errorf(err, DLB_ERR_INPUT, "no commits between %s and %s", good, bad);
    size_t n = 2;
    for (const char *c = text; s == DLB_OK && *c; c++)
        n += *c == '\n';
    char **v = s == DLB_OK ? calloc(n + 1, sizeof *v) : NULL;
    if (s == DLB_OK && !v)
        s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    if (s == DLB_OK) {
        size_t k = 0;
        v[k++] = g;
        g = NULL;
        for (char *line = strtok(text, "\n"); line && s == DLB_OK; line = strtok(NULL, "\n"))
            if (!(v[k++] = strdup(line)))
                s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
        *shas = v;
        *n_shas = k;
    }
    free(g);
    free(b);
    free(yes);
    free(text);
    return s;
}

int dlb_bisect_figure(const char *dir, const char *const *configs, size_t n_configs,
                      json_t **chosen, double *figure, char *why, size_t n_why)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/results.json", dir);
    json_t *doc = NULL;
    struct dlb_results res;
    struct dlb_error err = {""};
    if (dlb_results_read(path, &doc, &err) != DLB_OK ||
        dlb_results_parse(doc, path, &res, &err) != DLB_OK) {
        json_decref(doc);
        snprintf(why, n_why, "%s", err.msg);
        return -1;
    }
    json_decref(doc);
    double sum = 0;
    size_t used = 0;
    int rc = 0;
    if (!n_configs) {
        *chosen = json_array();
        for (size_t i = 0; i < res.n; i++)
            if (res.records[i].status == DLB_REC_OK && res.records[i].stats.median > 0) {
                sum += log(res.records[i].stats.median);
                used++;
                json_array_append_new(*chosen, json_string(res.records[i].id));
            }
        if (!used) {
            snprintf(why, n_why, "%s: no configuration ran", path);
            rc = -1;
        }
    }
    for (size_t k = 0; k < n_configs && rc == 0; k++) {
        const struct dlb_record *r = NULL;
        for (size_t i = 0; i < res.n; i++)
            if (!strcmp(res.records[i].id, configs[k]))
                r = &res.records[i];
        if (!r || r->status != DLB_REC_OK || !(r->stats.median > 0)) {
            snprintf(why, n_why, "%s: configuration '%s' %s", path, configs[k],
                     !r ? "is not in the run" : r->reason ? r->reason : "did not run");
            rc = -1;
            break;
        }
        sum += log(r->stats.median);
        used++;
    }
    if (rc == 0)
        *figure = exp(sum / (double)used);
    dlb_results_free(&res);
    return rc;
}
