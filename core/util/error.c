#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>

dlb_status dlb_errorf(struct dlb_error *e, dlb_status s, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return s;
}

const char *dlb_status_name(dlb_status s)
{
    switch (s) {
    case DLB_OK: return "ok";
    case DLB_ERR_INPUT: return "input";
    case DLB_ERR_IO: return "io";
    case DLB_ERR_NOMEM: return "nomem";
    case DLB_ERR_UNSUPPORTED: return "unsupported";
    case DLB_ERR_PLUGIN: return "plugin";
    case DLB_ERR_RUNTIME: return "runtime";
    case DLB_ERR_INTERNAL: return "internal";
    }
    return "unknown";
}
