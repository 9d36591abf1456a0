/* What --resume DIR reads back before it runs what is missing. */
#ifndef DLB_CORE_RUN_RESUME_H
#define DLB_CORE_RUN_RESUME_H

#include <stddef.h>
#include <jansson.h>

#include "options/options.h"
#include "util/error.h"
#include "plan/plan.h"

/* What --resume needs to rebuild the same plan: the suite, the --set
 * options, --quick, the plugin folders and the shard; for invocation.json. */
json_t *dlb_invocation_json(const struct dlb_options *o, const char *suite_path);

/* Read DIR/invocation.json into `o`: its --set options first, those given
 * now after them, as --set does on a fresh run. *origin gets the suite
 * file as the user first named it (malloc'ed, or NULL). */
dlb_status dlb_resume_load_invocation(struct dlb_options *o, const char *dir,
                                      char **origin, struct dlb_error *err);

/* An error about one of the first n_saved --set options (those
 * invocation.json holds) is reworded to blame that file, not the user. */
void dlb_resume_blame_invocation(const struct dlb_options *o, size_t n_saved,
                                 const char *dir, struct dlb_error *err);

/* The records already in DIR/journal.jsonl (an empty array when there is
 * no journal); a torn last line is dropped with a warning. */
dlb_status dlb_resume_read_journal(const char *dir, json_t **records,
                                   struct dlb_error *err);

/* Each record is a configuration of plan `p`, once per round and
 * repetition: else the journal belongs to another suite. */
dlb_status dlb_resume_check_records(const struct dlb_plan *p, const char *dir,
                                    json_t *records, struct dlb_error *err);

#endif
