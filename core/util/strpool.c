/* dlb_strpool: copies owned by the struct they were made for. */
#define _POSIX_C_SOURCE 200809L
#include "util/strpool.h"

#include <stdlib.h>
#include <string.h>

const char *dlb_strpool_add(struct dlb_strpool *p, const char *s)
{
    if (!s)
        return NULL;
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        char **v = realloc(p->v, cap * sizeof *v);
        if (!v) {
            p->nomem = 1;
            return NULL;
        }
        p->v = v;
        p->cap = cap;
    }
    char *copy = strdup(s);
    if (!copy) {
        p->nomem = 1;
        return NULL;
    }
    p->v[p->n++] = copy;
    return copy;
}

void dlb_strpool_free(struct dlb_strpool *p)
{
    for (size_t k = 0; k < p->n; k++)
        free(p->v[k]);
    free(p->v);
    memset(p, 0, sizeof *p);
}
