/* Private to the suite loader (suite.c, suite_ini.c, suite_check.c): the
 * state its three passes share. */
#ifndef DLB_CORE_SUITE_LOAD_H
#define DLB_CORE_SUITE_LOAD_H

#include <stddef.h>
#include "suite/suite.h"

/* One line of interest: a section header (key NULL) or a key. */
struct dlb_suite_entry {
    char *section, *key, *value;
    int line;
};

struct dlb_suite_loader {
    const char *path;
    const char *buf;
    size_t len;
    struct dlb_suite_entry *ents; /* in file order */
    size_t n_ents, cap;
    dlb_status st;
    struct dlb_error *err;
    struct dlb_suite *s;
    dlb_plugin_lookup_fn lookup;
    void *lookup_ctx;
    int *claimed; /* per (ns, param): line of its fixed value or axis */
    int *claimed_quick;
    unsigned *ns_base; /* index of (ns, 0) in claimed */
};

/* Record the first error as "FILE:LINE: message" and return its status;
 * later errors keep the first. */
dlb_status dlb_suite_fail_at(struct dlb_suite_loader *L, int line,
                             dlb_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Pass 1 (suite_ini.c): parse L->buf with inih into L->ents. */
dlb_status dlb_suite_read_ini(struct dlb_suite_loader *L);

/* Pass 3 (suite_check.c): validate one key entry into L->s, once every
 * plugin the suite names is active. */
dlb_status dlb_suite_alloc_claims(struct dlb_suite_loader *L);
dlb_status dlb_suite_check_entry(struct dlb_suite_loader *L,
                                 const struct dlb_suite_entry *e);
/* After pass 3 (suite_backend.c): a backend's own keys (cuda.graphs ...)
 * set to other than their defaults while the suite can only run other
 * backends are an error at their line. */
dlb_status dlb_suite_check_backend_keys(struct dlb_suite_loader *L);

#endif
