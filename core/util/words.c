/* Configuration ids as words (words.h). */
#include "util/words.h"

#include <stdio.h>
#include <string.h>

int dlb_words_has(const char *words, const char *tok, size_t tok_len)
{
    for (const char *p = words; p && *p;) {
        size_t n = strcspn(p, " ");
        if (n == tok_len && !strncmp(p, tok, n))
            return 1;
        p += n;
        p += strspn(p, " ");
    }
    return 0;
}

void dlb_words_not_in(char *out, size_t len, const char *id, const char *other)
{
    size_t used = 0;
    out[0] = '\0';
    for (const char *p = id; p && *p;) {
        size_t n = strcspn(p, " ");
        if (n && !dlb_words_has(other, p, n) && used + n + 2 < len)
            used += (size_t)snprintf(out + used, len - used, "%s%.*s",
                                     used ? " " : "", (int)n, p);
        p += n;
        p += strspn(p, " ");
    }
    if (!out[0] && id)
        snprintf(out, len, "%s", id);
}
