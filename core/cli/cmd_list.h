/* `dlbench list`, `dlbench plugin-help NAME` and `dlbench info`. */
#ifndef DLB_CORE_CMD_LIST_H
#define DLB_CORE_CMD_LIST_H

#include "options/options.h"

int dlb_cmd_list(const struct dlb_options *opts);
int dlb_cmd_plugin_help(const struct dlb_options *opts);
int dlb_cmd_info(const struct dlb_options *opts);

#endif
