/* db.h's PostgreSQL entry in a build without libpq: a clear refusal. */
#include "store/db.h"

dlb_status dlb_db_pg_open(const char *url, const char *shown,
                          const struct dlb_db_ops **ops, void **h,
                          struct dlb_error *err)
{
    (void)url;
    (void)ops;
    (void)h;
    return dlb_errorf(err, DLB_ERR_INPUT, "%s: this dlbench was built without "
                      "libpq, the PostgreSQL client library, so it cannot use a "
                      "PostgreSQL store: install Debian's libpq-dev and run "
                      "./configure and make again (or use a SQLite file)", shown);
}
