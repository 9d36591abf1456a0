/* Configuration ids as words: "model=vgg-small batch=64 amp.precision=bf16"
 * is three space-separated settings. A label that leaves out what a reader
 * already knows (the workload, the baseline, what every row shares) is
 * made from these. */
#ifndef DLB_CORE_UTIL_WORDS_H
#define DLB_CORE_UTIL_WORDS_H

#include <stddef.h>

/* Whether tok (tok_len bytes, not terminated) is one of the words of
 * `words` (NULL: none): batch=64 is not in batch=640. */
int dlb_words_has(const char *words, const char *tok, size_t tok_len);

/* The words of `id` that `other` (NULL: none) does not have,
 * space-separated, into out (len bytes); the whole id when none is left,
 * so that a label always names something. */
void dlb_words_not_in(char *out, size_t len, const char *id, const char *other);

#endif
