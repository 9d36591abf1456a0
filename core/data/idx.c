/* IDX reader. zlib reads gzip'ed and plain files alike, so one path serves
 * both. The payload buffer grows as bytes arrive instead of trusting the
 * header's size: a 16-byte file claiming 2 GiB must not allocate 2 GiB. */
#define _POSIX_C_SOURCE 200809L

#include "data/idx.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define IDX_TYPE_U8 0x08u
#define IDX_DIM_LIMIT (1u << 20)
#define IDX_SIZE_LIMIT ((uint64_t)2 << 30)
#define IDX_FIRST_CHUNK ((size_t)1 << 20)
#define IDX_GZ_BUFFER (128u * 1024u)

static const char *idx_type_name(unsigned code)
{
    switch (code) {
    case 0x08: return "unsigned byte";
    case 0x09: return "signed byte";
    case 0x0B: return "16-bit integer";
    case 0x0C: return "32-bit integer";
    case 0x0D: return "32-bit float";
    case 0x0E: return "64-bit float";
    }
    return "unknown";
}

/* What the payload holds, for messages: "expected 784 bytes of pixels". */
static const char *idx_unit(uint32_t ndim)
{
    return ndim == 3 ? "pixels" : ndim == 1 ? "labels" : "data";
}

static const char *idx_kind(uint32_t ndim)
{
    return ndim == 3 ? "images" : ndim == 1 ? "labels" : "data";
}

/* zlib's message without the "<fd:3>: " that gzdopen'ed files carry: the
 * caller names the file itself. */
static const char *idx_gz_message(gzFile f, int *errnum)
{
    const char *text = gzerror(f, errnum);
    const char *sep = strstr(text, ">: ");
    return strncmp(text, "<fd:", 4) == 0 && sep ? sep + 3 : text;
}

/* Read up to len bytes into buf; *got says how many arrived. Returns -1 when
 * the read came up short because zlib reported an error, else 0. zlib reads
 * ahead, so an error may be recorded while bytes before it are still
 * buffered: it matters only once a read comes up short. gzread takes an
 * unsigned count, hence the chunks. */
static int idx_gz_read(gzFile f, uint8_t *buf, size_t len, size_t *got)
{
    int errnum;

    *got = 0;
    while (*got < len) {
        size_t want = len - *got;
        if (want > ((size_t)1 << 30))
            want = (size_t)1 << 30;
        int r = gzread(f, buf + *got, (unsigned)want);
        if (r <= 0)
            break;
        *got += (size_t)r;
    }
    if (*got == len)
        return 0;
    gzerror(f, &errnum);
    return errnum == Z_OK ? 0 : -1;
}

/* Error for a read that came up short: a gzip stream that ends early and a
 * short plain file are both "truncated"; a damaged stream is not. zlib's
 * read-ahead makes the byte count of a damaged stream meaningless, so it is
 * left out. */
static dlb_status idx_read_error(gzFile f, const char *path, const char *what,
                                 uint64_t expected, uint64_t got,
                                 struct dlb_error *err)
{
    int errnum = Z_OK;
    const char *text = idx_gz_message(f, &errnum);

    if (errnum == Z_ERRNO)
        return dlb_errorf(err, DLB_ERR_IO, "%s: read failed: %s", path,
                          strerror(errno));
    if (errnum == Z_MEM_ERROR)
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory in zlib",
                          path);
    if (errnum != Z_OK && errnum != Z_BUF_ERROR)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: corrupt gzip stream: %s",
                          path, text);
    if (errnum == Z_BUF_ERROR)
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "%s: truncated: expected %llu bytes of %s, got %llu "
                          "(gzip: %s)", path, (unsigned long long)expected,
                          what, (unsigned long long)got, text);
    return dlb_errorf(err, DLB_ERR_INPUT,
                      "%s: truncated: expected %llu bytes of %s, got %llu",
                      path, (unsigned long long)expected, what,
                      (unsigned long long)got);
}

static dlb_status idx_read_header(gzFile f, const char *path, uint32_t ndim,
                                  struct dlb_idx *x, struct dlb_error *err)
{
    uint8_t magic[4], raw[4 * DLB_IDX_MAX_DIMS];
    size_t got;
    uint32_t want_magic = 0x0800u | ndim;

    if (idx_gz_read(f, magic, 4, &got) < 0 || got < 4)
        return idx_read_error(f, path, "IDX magic number", 4, got, err);
    uint32_t m = (uint32_t)magic[0] << 24 | (uint32_t)magic[1] << 16 |
                 (uint32_t)magic[2] << 8 | magic[3];
    if (magic[0] != 0 || magic[1] != 0)
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "%s: not an IDX file: magic number 0x%08x, expected "
                          "0x%08x for %s", path, (unsigned)m,
                          (unsigned)want_magic, idx_kind(ndim));
    if (magic[2] != IDX_TYPE_U8)
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "%s: IDX type code 0x%02x (%s) is not supported: "
                          "%s must be unsigned bytes (0x08)", path, magic[2],
                          idx_type_name(magic[2]), idx_kind(ndim));
    if (magic[3] != ndim)
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "%s: IDX file has %u dimensions, expected %u for %s "
                          "(magic 0x%08x)", path, magic[3], (unsigned)ndim,
                          idx_kind(ndim), (unsigned)want_magic);

    if (idx_gz_read(f, raw, 4 * ndim, &got) < 0 || got < 4 * ndim)
        return idx_read_error(f, path, "IDX dimensions", 4 * ndim, got, err);
    uint64_t total = 1;
    for (uint32_t i = 0; i < ndim; i++) {
        const uint8_t *b = raw + 4 * i;
        uint32_t d = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
                     (uint32_t)b[2] << 8 | b[3];
        if (d == 0 || d >= IDX_DIM_LIMIT)
            return dlb_errorf(err, DLB_ERR_INPUT,
                              "%s: dimension %u is %lu, expected 1 to %u",
                              path, (unsigned)i, (unsigned long)d,
                              IDX_DIM_LIMIT - 1);
        x->dims[i] = d;
        total *= d; /* each < 2^20 and ndim <= 3: no overflow */
    }
    if (total >= IDX_SIZE_LIMIT)
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "%s: header declares %llu bytes of %s, above the "
                          "2 GiB limit", path, (unsigned long long)total,
                          idx_unit(ndim));
    x->ndim = ndim;
    x->size = (size_t)total;
    return DLB_OK;
}

static dlb_status idx_read_payload(gzFile f, const char *path,
                                   struct dlb_idx *x, struct dlb_error *err)
{
    const char *what = idx_unit(x->ndim);
    size_t cap = x->size < IDX_FIRST_CHUNK ? x->size : IDX_FIRST_CHUNK;
    size_t have = 0;
    uint8_t *buf = malloc(cap);

    if (!buf)
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory for %zu "
                          "bytes of %s", path, cap, what);
    for (;;) {
        size_t got;
        int rc = idx_gz_read(f, buf + have, cap - have, &got);
        have += got;
        if (rc < 0 || have < cap)
            break;
        if (cap == x->size)
            break;
        size_t next = cap > x->size / 2 ? x->size : cap * 2;
        uint8_t *p = realloc(buf, next);
        if (!p) {
            free(buf);
            return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory for "
                              "%zu bytes of %s", path, next, what);
        }
        buf = p;
        cap = next;
    }
    if (have < x->size) {
        free(buf);
        return idx_read_error(f, path, what, x->size, have, err);
    }

    /* Bytes past the payload mean the header and the data disagree: a
     * wrong dimension would silently shift every image. Reading them also
     * makes zlib check the gzip trailer (CRC and length). */
    uint8_t extra[4096];
    uint64_t trailing = 0;
    size_t got;
    int rc;
    do {
        rc = idx_gz_read(f, extra, sizeof extra, &got);
        trailing += got;
    } while (rc == 0 && got == sizeof extra);
    if (rc < 0) {
        int errnum;
        const char *text = idx_gz_message(f, &errnum);
        free(buf);
        if (errnum == Z_ERRNO)
            return dlb_errorf(err, DLB_ERR_IO, "%s: read failed: %s", path,
                              strerror(errno));
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: corrupt gzip stream: %s",
                          path, text);
    }
    if (trailing) {
        free(buf);
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "%s: %llu trailing byte%s after the %zu bytes of %s "
                          "the header declares", path,
                          (unsigned long long)trailing,
                          trailing == 1 ? "" : "s", x->size, what);
    }
    x->data = buf;
    return DLB_OK;
}

dlb_status dlb_idx_read(const char *path, uint32_t ndim, struct dlb_idx *out,
                        struct dlb_error *err)
{
    struct dlb_idx x;
    dlb_status s;

    memset(out, 0, sizeof *out);
    memset(&x, 0, sizeof x);
    if (ndim == 0 || ndim > DLB_IDX_MAX_DIMS)
        return dlb_errorf(err, DLB_ERR_INTERNAL, "%s: cannot read IDX files "
                          "with %u dimensions", path, (unsigned)ndim);

    /* open() first so that a missing or unreadable file reports errno, which
     * gzopen does not promise to keep. */
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return dlb_errorf(err, DLB_ERR_IO, "%s: cannot open: %s", path,
                          strerror(errno));
    gzFile f = gzdopen(fd, "rb");
    if (!f) {
        close(fd);
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory in zlib",
                          path);
    }
    gzbuffer(f, IDX_GZ_BUFFER);

    s = idx_read_header(f, path, ndim, &x, err);
    if (s == DLB_OK)
        s = idx_read_payload(f, path, &x, err);
    gzclose_r(f);
    if (s == DLB_OK)
        *out = x;
    return s;
}

void dlb_idx_free(struct dlb_idx *x)
{
    free(x->data);
    memset(x, 0, sizeof *x);
}
