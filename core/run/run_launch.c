/* Multi-process configurations and shards in `dlbench run`. */
#include "run/run_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/launcher.h"

/* --launcher (or --set launcher=) first, then DLBENCH_LAUNCHER; "" is
 * the default mpirun. Never a suite file: the loader refuses the key. */
static const char *launcher_cmd(const struct dlb_config *c)
{
    const char *cmd = c->core.launcher;
    const char *env = getenv("DLBENCH_LAUNCHER");
    if (cmd && *cmd)
        return cmd;
    return env ? env : "";
}

dlb_status dlb_run_launch_check(const struct dlb_options *o,
                                const struct dlb_plan *p,
                                struct dlb_error *err)
{
    const char *what = NULL;
    if (dlb_launched(&what))
        return dlb_errorf(err, DLB_ERR_INPUT, "dlbench was started by an MPI "
                          "launcher (%s is set): run dlbench itself without "
                          "mpirun or srun; configurations that need several "
                          "ranks start them through the launcher, e.g. "
                          "--launcher \"srun -n {ranks}\" or \"mpirun -np "
                          "{ranks} --hostfile hosts\"", what);
    if (o->shard_n > 1 && p->n > 0 &&
        !strncmp(p->configs[0].core.search, "halving", 7))
        return dlb_errorf(err, DLB_ERR_INPUT, "--shard %d/%d: search = halving "
                          "picks each round from every record of the round "
                          "before; shard grid or random:N suites only",
                          o->shard_k, o->shard_n);
    for (size_t i = 0; i < p->n; i++) {
        const struct dlb_config *c = &p->configs[i];
        int ranks = dlb_launch_ranks(p, c);
        char **argv = NULL;
        if (ranks <= 1 || !dlb_run_in_shard(o, i))
            continue;
        dlb_status s = dlb_launcher_argv(launcher_cmd(c), ranks, &argv,
                                         err);
        dlb_launcher_argv_free(argv);
        if (s != DLB_OK)
            return s;
    }
    return DLB_OK;
}

int dlb_run_in_shard(const struct dlb_options *o, size_t pos)
{
    return o->shard_n <= 1 || pos % (size_t)o->shard_n == (size_t)(o->shard_k - 1);
}

dlb_status dlb_run_launch_prepare(const struct dlb_plan *p,
                                  const struct dlb_config *c, const char *dir,
                                  char **argv, struct dlb_child_spec *spec,
                                  struct dlb_error *err)
{
    int ranks = dlb_launch_ranks(p, c);
    char path[4096];
    char **a;
    spec->launcher = NULL;
    spec->record_path = NULL;
    if (ranks <= 1)
        return DLB_OK;
    for (a = argv; *a && strcmp(*a, "--record-fd"); a++)
        ;
    if (!*a || !a[1])
        return dlb_errorf(err, DLB_ERR_INTERNAL, "child argv has no record "
                          "descriptor to replace");
    snprintf(path, sizeof path, "%s/logs/config-%zu.record.json", dir, c->index);
    char *rec = strdup(path);
    if (!rec)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    dlb_status s = dlb_launcher_argv(launcher_cmd(c), ranks,
                                     &spec->launcher, err);
    if (s != DLB_OK) {
        free(rec);
        return s;
    }
    unlink(rec); /* a record left by an earlier attempt is not this one's */
    a[0] = "--record-file";
    a[1] = rec;
    spec->record_path = rec;
    return DLB_OK;
}

void dlb_run_launch_release(struct dlb_child_spec *spec)
{
    dlb_launcher_argv_free(spec->launcher);
    free((char *)spec->record_path);
    spec->launcher = NULL;
    spec->record_path = NULL;
}
