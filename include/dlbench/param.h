/* dlbench public SDK: typed parameter tables.
 *
 * One table describes every key a plugin (or the core's [suite] section)
 * accepts. The same table validates suite files, expands sweep axes, fills
 * defaults and prints `dlbench plugin-help NAME`. */
#ifndef DLBENCH_PARAM_H
#define DLBENCH_PARAM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum dlb_param_type {
    DLB_PARAM_INT,    /* signed 64-bit integer, decimal */
    DLB_PARAM_FLOAT,  /* double */
    DLB_PARAM_BOOL,   /* on/off, true/false, yes/no, 1/0 */
    DLB_PARAM_ENUM,   /* one of `choices` */
    DLB_PARAM_SIZE,   /* bytes, with optional suffix K, M, G (binary: KiB ...) */
    DLB_PARAM_STRING, /* free text */
    DLB_PARAM_TIME    /* seconds, with optional suffix ns, us, ms, s, min */
};

/* Flags of a parameter definition. */
#define DLB_PARAM_HAS_MIN 0x1u /* value must be >= min */
#define DLB_PARAM_HAS_MAX 0x2u /* value must be <= max */
#define DLB_PARAM_NO_SWEEP 0x4u /* may not be a sweep axis */
/* The bound itself is excluded (lr > 0, a fraction < 1). */
#define DLB_PARAM_MIN_EXCLUSIVE 0x10000u
#define DLB_PARAM_MAX_EXCLUSIVE 0x20000u

struct dlb_param_def {
    const char *name;            /* key, [a-z0-9_.]+ */
    enum dlb_param_type type;
    const char *def;             /* default, as it would be written in a suite */
    unsigned flags;              /* DLB_PARAM_HAS_MIN ... */
    double min, max;             /* bounds for INT, FLOAT, SIZE, TIME */
    const char *const *choices;  /* ENUM: NULL-terminated list of allowed values */
    const char *unit;            /* shown in help and tables; may be NULL */
    const char *help;            /* one line: what it means */
};

/* A parsed value. Which fields are meaningful depends on the type:
 * INT, BOOL (0/1), SIZE (bytes): i;  FLOAT, TIME (seconds): f;
 * ENUM: i is the index into choices and s the choice;  STRING: s.
 * `s` always holds the canonical text of the value. */
struct dlb_value {
    int64_t i;
    double f;
    const char *s;
};

/* The values of one plugin's parameters for one configuration, in the order
 * of its table: values[k] belongs to params[k]. */
struct dlb_params {
    const struct dlb_param_def *defs;
    const struct dlb_value *values;
    unsigned count;
};

#ifdef __cplusplus
}
#endif
#endif
