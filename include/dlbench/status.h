/* dlbench public SDK: status codes shared by the core and plugins. */
#ifndef DLBENCH_STATUS_H
#define DLBENCH_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Every fallible function in the core and in plugins returns one of these.
 * Only main() turns a status into an exit status. */
typedef enum dlb_status {
    DLB_OK = 0,
    DLB_ERR_INPUT,       /* bad user input: suite, model file, data file, option */
    DLB_ERR_IO,          /* a read, write or rename failed */
    DLB_ERR_NOMEM,       /* allocation failed: the configuration's status is oom */
    DLB_ERR_UNSUPPORTED, /* this device or build cannot do it: skipped, with reason */
    DLB_ERR_PLUGIN,      /* a plugin misbehaved or failed to load */
    DLB_ERR_RUNTIME,     /* a library (oneDNN, CUDA, MPI ...) reported an error */
    DLB_ERR_INTERNAL     /* a broken invariant: a bug in dlbench */
} dlb_status;

/* A short stable name for the status ("input", "io", ...). */
const char *dlb_status_name(dlb_status s);

#ifdef __cplusplus
}
#endif
#endif
