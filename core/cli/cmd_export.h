/* dlbench export RUNDIR: the winners of a run written as ONNX
 * (cmd_export.c, doc/onnx.md's "Export"). */
#ifndef DLB_CORE_CLI_CMD_EXPORT_H
#define DLB_CORE_CLI_CMD_EXPORT_H

/* argv[0] is "export"; returns the exit status: 0 written, 1 a re-run
 * failed, 2 bad input (no such run directory, no best.ini, a workload
 * out of range), 3 out of memory. */
int dlb_cmd_export(int argc, char **argv);

#endif
