/* The suite's `search` key, read when the plan is built: which search
 * strategy a run takes (the rounds themselves are core/search/search.h's). It
 * sits with the plan so that a misspelt value fails before anything runs,
 * with the suite line at fault, and so that the plan needs nothing of the
 * selection. */
#ifndef DLB_CORE_PLAN_SEARCH_H
#define DLB_CORE_PLAN_SEARCH_H

#include <stddef.h>
#include "util/error.h"
#include "plan/plan.h"

enum dlb_search_kind { DLB_SEARCH_GRID, DLB_SEARCH_RANDOM, DLB_SEARCH_HALVING };

struct dlb_search {
    enum dlb_search_kind kind;
    size_t n;        /* random:N */
    int halving_small; /* halving asked for, too few configurations: grid */
    size_t halving_groups; /* halving asked for over this many workloads
                            * (select.h): grid, as its rounds rank every
                            * configuration against every other */
};

/* Parse a `search` value. On failure `why` says what was expected. */
dlb_status dlb_search_parse(const char *text, struct dlb_search *out,
                            char *why, size_t why_len);

/* Where the value in force of core key `key` came from, for an error
 * message: "FILE:LINE: name" of [quick] or [suite], else "--set name". */
void dlb_plan_key_where(const struct dlb_plan *p, enum dlb_core_key key,
                        char *buf, size_t len);

/* The plan's `search` key parses (DLB_ERR_INPUT naming the line if not). */
dlb_status dlb_plan_check_search(const struct dlb_plan *p, struct dlb_error *err);

#endif
