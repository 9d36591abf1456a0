/* `dlbench merge DIR...`: join the run directories of a sharded run
 * (--shard K/N) into one, as if one run had measured every configuration;
 * shards of different suites, suite versions or settings are refused. */
#ifndef DLB_CORE_CMD_MERGE_H
#define DLB_CORE_CMD_MERGE_H

#include "options/options.h"

/* Exit status: 0 merged, 1 merged but a configuration failed or no
 * winner, 2 bad usage or shards that do not belong together. */
int dlb_cmd_merge(struct dlb_options *opts);

#endif
