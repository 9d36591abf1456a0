/* For harnesses whose reader takes a path: the input as an anonymous
 * in-memory file, named /proc/self/fd/N. Nothing touches the disk. */
#ifndef DLB_FUZZ_FILE_H
#define DLB_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

struct fuzz_file {
    int fd;
    char path[64];
};

/* 0 on success; the harness skips the input otherwise. */
static int fuzz_file_open(struct fuzz_file *f, const uint8_t *data, size_t size)
{
    f->fd = memfd_create("fuzz-input", MFD_CLOEXEC);
    if (f->fd < 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(f->fd, data + done, size - done);
        if (w <= 0) {
            close(f->fd);
            return -1;
        }
        done += (size_t)w;
    }
    snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
    return 0;
}

static void fuzz_file_close(struct fuzz_file *f)
{
    close(f->fd);
}

#endif
