/* What every command that reads a suite needs: the plugin registry, the
 * parsed suite and its plan. Used by the parent and by each child. */
#ifndef DLB_CORE_SESSION_H
#define DLB_CORE_SESSION_H

#include "options/options.h"
#include "plan/plan.h"
#include "suite/registry.h"
#include "suite/suite.h"

struct dlb_session {
    struct dlb_registry reg;
    struct dlb_suite suite;
    struct dlb_plan plan;
    char *suite_path;
    int have_reg, have_suite, have_plan;
};

/* Installed locations, from the build. */
const char *dlb_installed_plugin_dir(void);
const char *dlb_installed_suite_dir(void);

dlb_status dlb_session_open_registry(struct dlb_session *s,
                                     const struct dlb_options *o,
                                     struct dlb_error *err);

/* Find and load the suite (a name or a path) and build its plan with the
 * options' overrides. */
dlb_status dlb_session_open(struct dlb_session *s, const struct dlb_options *o,
                            const char *suite, struct dlb_error *err);
void dlb_session_close(struct dlb_session *s);

/* The namespace of a plugin in the suite, or 0 when it is not active. */
unsigned dlb_session_plugin_ns(const struct dlb_session *s, const char *name);

#endif
