/* The `mmap` source: the decoded data set (uint8 images and labels behind a
 * small header) in a file under the user's dlbench cache directory,
 * written once (temporary file, then rename) and mapped read-only, so that
 * the loader reads pixels from the page cache as a framework reading a
 * prepared dataset file does.
 *
 * File: DIR/data/u8-HASH.bin, HASH being a 64-bit hash of the shape and the
 * bytes. Header (little-endian as the machine writes it; the file is a
 * cache, never moved between machines):
 *   magic "DLBU8\0\0\1", u32 n, c, h, w, classes, pad, u64 hash, u64 size
 * then n*c*h*w pixel bytes, then n label bytes. A file whose size, magic,
 * shape or hash differs is rebuilt. */
#ifndef DLB_PLUGIN_DL_CACHE_H
#define DLB_PLUGIN_DL_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/plugin.h>

struct dl_cache {
    void *map;
    size_t size;
    const uint8_t *images, *labels;
    int written;        /* 1 when this call wrote the file */
    char path[4096];
};

/* Map the cache file of `ds`, writing it first when it is missing or
 * invalid. DLB_ERR_IO (logged through h) when the directory or file cannot
 * be made; DLB_ERR_INPUT when there is no cache directory. */
dlb_status dl_cache_open(const struct dlb_host *h, const struct dlb_dataset *ds,
                         struct dl_cache *c);
void dl_cache_close(struct dl_cache *c);

#endif
