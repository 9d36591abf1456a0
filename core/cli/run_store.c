/* `dlbench run ... --store DB`: the store opened (and made) before the
 * run, so that a wrong name or URL costs nothing, and the finished run
 * added to it. */
#include "cli/cmd_run.h"

#include <stdio.h>
#include "store/store.h"

dlb_status dlb_run_store_check(const struct dlb_options *o, struct dlb_error *err)
{
    struct dlb_store *st = NULL;
    dlb_status s = o->store ? dlb_store_open(o->store, DLB_DB_CREATE, &st, err) : DLB_OK;
    dlb_store_close(st);
    return s;
}

int dlb_run_store_add(const struct dlb_options *o, const char *dir)
{
    if (!o->store)
        return 0;
    struct dlb_error err = {""};
    struct dlb_store_labels labels = {o->store_machine, o->store_commit};
    struct dlb_store_run run;
    struct dlb_store *st = NULL;
    struct dlb_store_added added = {0, 0, 0, 0};
    dlb_status s = dlb_store_run_load(dir, &labels, &run, &err);
    if (s == DLB_OK) {
        s = dlb_store_open(o->store, DLB_DB_CREATE, &st, &err);
        if (s == DLB_OK)
            s = dlb_store_add(st, &run, 1, &added, &err);
        dlb_store_run_free(&run);
    }
    dlb_store_close(st);
    if (s != DLB_OK) {
        fprintf(stderr, "dlbench: the run is not in the store: %s; its results are in "
                "%s (dlbench store add %s %s adds them)\n", err.msg, dir, o->store, dir);
        return -1;
    }
    fprintf(stderr, "dlbench: stored in %s: %lld configuration rows added, %lld known "
            "already\n", o->store, added.rows_added, added.rows_known);
    return 0;
}
