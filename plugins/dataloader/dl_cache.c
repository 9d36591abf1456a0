/* The mmap source's cache file (format in dl_cache.h). */
#define _POSIX_C_SOURCE 200809L

#include "dl_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char dl_magic[8] = {'D', 'L', 'B', 'U', '8', 0, 0, 1};

struct dl_header {
    char magic[8];
    uint32_t n, c, h, w, classes, pad;
    uint64_t hash, size;
};

/* 64-bit multiply-xor hash, 8 bytes a step: tens of milliseconds for
 * Fashion-MNIST, a cost paid at open, never in a step. */
static uint64_t hash_bytes(uint64_t x, const uint8_t *p, size_t len)
{
    const uint64_t m = 0x9e3779b97f4a7c15ull;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        x = (x ^ v) * m;
        x ^= x >> 29;
    }
    for (; i < len; i++)
        x = (x ^ p[i]) * m;
    return x ^ (x >> 32);
}

static void fill_header(const struct dlb_host *h, const struct dlb_dataset *ds,
                        struct dl_header *hd, const uint8_t **im,
                        const uint8_t **lb)
{
    memset(hd, 0, sizeof *hd);
    memcpy(hd->magic, dl_magic, sizeof dl_magic);
    h->dataset_shape(h, ds, &hd->n, &hd->c, &hd->h, &hd->w, &hd->classes);
    h->dataset_bytes(h, ds, im, lb);
    size_t pixels = (size_t)hd->n * hd->c * hd->h * hd->w;
    uint64_t x = hash_bytes(0x646c62656e6368ull, (const uint8_t *)hd,
                            offsetof(struct dl_header, hash));
    x = hash_bytes(x, *im, pixels);
    hd->hash = hash_bytes(x, *lb, hd->n);
    hd->size = sizeof *hd + pixels + hd->n;
}

static dlb_status make_dir(const struct dlb_host *h, char *path)
{
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char keep = *p;
        *p = '\0';
        int rc = mkdir(path, 0755), e = errno;
        *p = keep;
        if (rc != 0 && e != EEXIST) {
            h->log(h, DLB_LOG_ERROR, "cannot create the cache directory %s: "
                   "%s (set DLBENCH_CACHE_DIR)", path, strerror(e));
            return DLB_ERR_IO;
        }
        if (keep == '\0')
            return DLB_OK;
    }
}

static int write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Temporary file in the same directory, then rename: a reader never sees
 * a half-written cache, and concurrent writers each publish a whole one. */
static dlb_status write_file(const struct dlb_host *h, const char *path,
                             const struct dl_header *hd, const uint8_t *im,
                             const uint8_t *lb)
{
    char tmp[4096 + 16];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        h->log(h, DLB_LOG_ERROR, "cannot write %s: %s", tmp, strerror(errno));
        return DLB_ERR_IO;
    }
    size_t pixels = (size_t)hd->n * hd->c * hd->h * hd->w;
    int bad = write_all(fd, hd, sizeof *hd) || write_all(fd, im, pixels) ||
              write_all(fd, lb, hd->n) || fchmod(fd, 0644) || fsync(fd);
    int e = errno;
    if (close(fd) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (!bad && rename(tmp, path) != 0) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        unlink(tmp);
        h->log(h, DLB_LOG_ERROR, "cannot write %s: %s", path, strerror(e));
        return DLB_ERR_IO;
    }
    return DLB_OK;
}

/* Map `path` and accept it only when it is exactly the expected file:
 * size, header, and the hash recomputed over the mapped bytes (which also
 * brings its pages into memory before the first step). */
static int map_valid(const struct dlb_host *h, const struct dlb_dataset *ds,
                     const char *path, const struct dl_header *want,
                     struct dl_cache *c)
{
    struct dl_header got;
    const uint8_t *im, *lb;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return 0;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != want->size) {
        close(fd);
        return 0;
    }
    void *m = mmap(NULL, (size_t)want->size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return 0;
    memcpy(&got, m, sizeof got);
    im = (const uint8_t *)m + sizeof got;
    lb = im + (size_t)want->n * want->c * want->h * want->w;
    struct dlb_dataset *view = NULL;
    int ok = memcmp(&got, want, sizeof got) == 0;
    /* Recompute over the mapped bytes, through a view of them. */
    if (ok && (ok = h->dataset_view(h, ds, im, lb, &view) == DLB_OK)) {
        struct dl_header again;
        const uint8_t *a, *b;
        fill_header(h, view, &again, &a, &b);
        ok = again.hash == want->hash;
        h->dataset_view_free(h, view);
    }
    if (!ok) {
        munmap(m, (size_t)want->size);
        return 0;
    }
    c->map = m;
    c->size = (size_t)want->size;
    c->images = im;
    c->labels = lb;
    return 1;
}

dlb_status dl_cache_open(const struct dlb_host *h, const struct dlb_dataset *ds,
                         struct dl_cache *c)
{
    struct dl_header hd;
    const uint8_t *im, *lb;
    char dir[4096 - 64];
    memset(c, 0, sizeof *c);
    h->dataset_bytes(h, ds, &im, &lb);
    if (!im || !lb) {
        /* an image folder decodes per batch: there are no decoded bytes
         * to map */
        h->log(h, DLB_LOG_ERROR, "source = mmap needs a data set held "
               "decoded in memory (Fashion-MNIST or synthetic); an image "
               "folder is decoded per batch: use source = memory");
        return DLB_ERR_INPUT;
    }
    if (h->cache_dir(h, dir, sizeof dir) != DLB_OK) {
        h->log(h, DLB_LOG_ERROR, "source = mmap: no cache directory: set "
               "DLBENCH_CACHE_DIR, XDG_CACHE_HOME or HOME");
        return DLB_ERR_INPUT;
    }
    strcat(dir, "/data");
    dlb_status st = make_dir(h, dir);
    if (st != DLB_OK)
        return st;
    fill_header(h, ds, &hd, &im, &lb);
    snprintf(c->path, sizeof c->path, "%s/u8-%016llx.bin", dir,
             (unsigned long long)hd.hash);
    if (map_valid(h, ds, c->path, &hd, c))
        return DLB_OK;
    if ((st = write_file(h, c->path, &hd, im, lb)) != DLB_OK)
        return st;
    c->written = 1;
    if (map_valid(h, ds, c->path, &hd, c))
        return DLB_OK;
    h->log(h, DLB_LOG_ERROR, "%s: written but does not read back valid",
           c->path);
    return DLB_ERR_IO;
}

void dl_cache_close(struct dl_cache *c)
{
    if (c->map)
        munmap(c->map, c->size);
    memset(c, 0, sizeof *c);
}
