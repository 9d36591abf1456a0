/* dlbench: which deep-learning optimizations pay off on this machine. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "child/child.h"
#include "results/git_commit.h" /* made by the build, at every build */
#include "options/options.h"
#include "cli/cmd_compare.h"
#include "cli/cmd_export.h"
#include "cli/cmd_list.h"
#include "cli/cmd_merge.h"
#include "cli/cmd_run.h"
#include "cli/hist_args.h"

int main(int argc, char **argv)
{
    struct dlb_options opts;
    struct dlb_error err = {""};
    /* Whatever the umask, nothing dlbench writes (run directories,
     * journals, reports, caches) is writable by other users: they could
     * alter measurements or plant files in a run. */
    umask(umask(0) | S_IWOTH);
    /* Whole lines on stdout before anything on stderr: with both streams
     * sent to one file, a fully buffered stdout came out in 4 KiB pieces
     * and a warning landed in the middle of a verdict's line. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* The commands over the results store parse their own options. */
    if (argc > 1 && dlb_hist_is_command(argv[1]))
        return dlb_hist_main(argc - 1, argv + 1);
    /* export takes its own options, as those commands do */
    if (argc > 1 && !strcmp(argv[1], "export"))
        return dlb_cmd_export(argc - 1, argv + 1);
    if (dlb_cli_parse(argc, argv, &opts, &err) != DLB_OK) {
        fprintf(stderr, "dlbench: %s\n", err.msg);
        dlb_cli_free(&opts);
        return 2;
    }
    int rc = 0;
    switch (opts.cmd) {
    case DLB_CMD_RUN: rc = dlb_cmd_run(&opts); break;
    case DLB_CMD_LIST: rc = dlb_cmd_list(&opts); break;
    case DLB_CMD_PLUGIN_HELP: rc = dlb_cmd_plugin_help(&opts); break;
    case DLB_CMD_INFO: rc = dlb_cmd_info(&opts); break;
    case DLB_CMD_CHILD: rc = dlb_child_main(&opts); break;
    case DLB_CMD_COMPARE: rc = dlb_cmd_compare(&opts); break;
    case DLB_CMD_HISTORY: rc = dlb_cmd_history(&opts); break;
    case DLB_CMD_BASELINE: rc = dlb_cmd_baseline(&opts); break;
    case DLB_CMD_MERGE: rc = dlb_cmd_merge(&opts); break;
    case DLB_CMD_VERSION:
        printf("dlbench %s (commit %s)\n", PACKAGE_VERSION, DLB_GIT_COMMIT);
        break;
    case DLB_CMD_HELP:
        dlb_cli_usage(stdout);
        break;
    case DLB_CMD_NONE:
        dlb_cli_usage(stderr);
        rc = 2;
        break;
    }
    dlb_cli_free(&opts);
    return rc;
}
