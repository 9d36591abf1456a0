/* The on-disk cache of searched convolution algorithms (cuda_algo_cache.h).
 * Lines are "GPU<TAB>cuDNN<TAB>shape<TAB>direction<TAB>algo<TAB>math",
 * appended with one write each, so that configurations running one after
 * another (or a few at once) only ever add whole lines. */
#include "cuda_algo_cache.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../dtype.h"
#include "util/cache_dir.h"

#define KEY_LEN 160

struct entry {
    char key[KEY_LEN];
    int dir, algo, math;
    struct entry *next;
};

struct dlb_cuda_algo_cache {
    char dir[1024];
    char path[1100];
    char ident[320]; /* "GPU<TAB>cuDNN" */
    struct entry *head;
};

/* A grouped convolution's key ends in " g<groups>"; one group's has no
 * such word, so the lines kept before groups existed still match. */
static void make_key(char *out, const struct dlb_conv2d_desc *d,
                     enum dlb_dtype t, int tf32)
{
    char g[16] = "";
    if (d->groups > 1)
        snprintf(g, sizeof g, " g%u", d->groups);
    snprintf(out, KEY_LEN, "n%u c%u %ux%u k%u %ux%u s%ux%u p%ux%u %s%s%s", d->n,
             d->in_c, d->in_h, d->in_w, d->out_c, d->kh, d->kw, d->stride_h,
             d->stride_w, d->pad_h, d->pad_w, dlb_dtype_name(t),
             t == DLB_F32 ? (tf32 ? " tf32" : " fma") : "", g);
}

static void add(struct dlb_cuda_algo_cache *c, const char *key, int dir,
                int algo, int math)
{
    struct entry *e = calloc(1, sizeof *e);
    if (!e)
        return; /* only the memory of a choice is lost */
    snprintf(e->key, sizeof e->key, "%s", key);
    e->dir = dir;
    e->algo = algo;
    e->math = math;
    e->next = c->head;
    c->head = e;
}

static void load(struct dlb_cuda_algo_cache *c)
{
    FILE *f = fopen(c->path, "r");
    char line[1024];
    size_t id_len = strlen(c->ident);
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char key[KEY_LEN];
        int dir, algo, math;
        char *rest = line + id_len;
        if (strncmp(line, c->ident, id_len) != 0 || *rest != '\t')
            continue;
        rest++;
        char *tab = strchr(rest, '\t');
        if (!tab || (size_t)(tab - rest) >= sizeof key)
            continue;
        memcpy(key, rest, (size_t)(tab - rest));
        key[tab - rest] = '\0';
        if (sscanf(tab + 1, "%d\t%d\t%d", &dir, &algo, &math) == 3 &&
            dir >= 0 && dir <= 2)
            add(c, key, dir, algo, math);
    }
    fclose(f);
}

void dlb_cuda_algo_cache_open(struct dlb_cuda *cu)
{
    struct dlb_cuda_algo_cache *c = calloc(1, sizeof *c);
    if (!c)
        return;
    cu->algo_cache = c;
    snprintf(c->ident, sizeof c->ident, "%s sm_%d%d\tcuDNN %zu", cu->prop.name,
             cu->prop.major, cu->prop.minor, cudnnGetVersion());
    if (dlb_cache_dir(c->dir, sizeof c->dir, NULL) != DLB_OK)
        return; /* nowhere to keep choices: search every run */
    snprintf(c->path, sizeof c->path, "%s/cudnn-algos.tsv", c->dir);
    load(c);
}

void dlb_cuda_algo_cache_free(struct dlb_cuda *cu)
{
    struct dlb_cuda_algo_cache *c = cu->algo_cache;
    if (!c)
        return;
    for (struct entry *e = c->head, *next; e; e = next) {
        next = e->next;
        free(e);
    }
    free(c);
    cu->algo_cache = NULL;
}

int dlb_cuda_algo_cache_get(struct dlb_cuda *cu, const struct dlb_conv2d_desc *d,
                            enum dlb_dtype t, enum dlb_cuda_conv_dir dir,
                            int *algo, cudnnMathType_t *math)
{
    char key[KEY_LEN];
    if (!cu->algo_cache)
        return 0;
    make_key(key, d, t, cu->tf32);
    for (struct entry *e = cu->algo_cache->head; e; e = e->next)
        if (e->dir == (int)dir && !strcmp(e->key, key)) {
            *algo = e->algo;
            *math = (cudnnMathType_t)e->math;
            return 1;
        }
    return 0;
}

void dlb_cuda_algo_cache_put(struct dlb_cuda *cu, const struct dlb_conv2d_desc *d,
                             enum dlb_dtype t, enum dlb_cuda_conv_dir dir,
                             int algo, cudnnMathType_t math)
{
    struct dlb_cuda_algo_cache *c = cu->algo_cache;
    char key[KEY_LEN], line[640];
    struct dlb_error err; /* a choice not kept is searched again: no error */
    if (!c)
        return;
    make_key(key, d, t, cu->tf32);
    add(c, key, (int)dir, algo, (int)math);
    if (!c->path[0])
        return;
    int n = snprintf(line, sizeof line, "%s\t%s\t%d\t%d\t%d\n", c->ident, key,
                     (int)dir, algo, (int)math);
    if (n <= 0 || (size_t)n >= sizeof line || 
        dlb_make_dirs(c->dir, &err) != DLB_OK)
        return;
    int fd = open(c->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (write(fd, line, (size_t)n) != n) {
        /* a short line is skipped by load(): nothing else to do */
    }
    close(fd);
}
