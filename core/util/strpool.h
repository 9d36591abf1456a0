/* Strings a struct built in memory owns: copies kept until the pool is
 * freed, so that a document's fields (ids, sentences) outlive the records
 * and buffers they were made from. */
#ifndef DLB_CORE_STRPOOL_H
#define DLB_CORE_STRPOOL_H

#include <stddef.h>

struct dlb_strpool {
    char **v;
    size_t n, cap;
    int nomem;          /* a copy failed: what it returned is NULL */
};

/* A copy of `s` that lives as long as the pool; NULL for NULL, and on
 * failure (nomem is then set, for the builder to report once). */
const char *dlb_strpool_add(struct dlb_strpool *p, const char *s);
void dlb_strpool_free(struct dlb_strpool *p);

#endif
