/* The journal: DIR/journal.jsonl, one compact JSON record per line, each
 * written as soon as its configuration finishes and synced to disk at once
 * or while the next configuration starts, so that a killed run loses at
 * most the line it was writing and --resume can carry on. */
#define _POSIX_C_SOURCE 200809L

#include "results/results.h"
#include "util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JOURNAL_NAME "journal.jsonl"

struct dlb_journal {
    int fd;
    off_t size; /* bytes of whole records; a failed append is cut back to it */
    int damaged; /* a partial line could not be cut back: append no more */
    int unsynced; /* the last record was written but not yet fsync'ed */
    char *path;
};

/* Read all of `path` into a NUL-terminated buffer. */
static dlb_status slurp(const char *path, char **buf, size_t *len,
                        struct dlb_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return dlb_errorf(err, DLB_ERR_IO, "cannot open %s: %s", path,
                          strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    while (b) {
        n += fread(b + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        char *nb = realloc(b, cap *= 2);
        if (!nb)
            free(b);
        b = nb;
    }
    int bad = ferror(f);
    int e = errno;
    fclose(f);
    if (!b)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory reading %s", path);
    if (bad) {
        free(b);
        return dlb_errorf(err, DLB_ERR_IO, "cannot read %s: %s", path,
                          strerror(e));
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return DLB_OK;
}

/* Parse a journal held in memory. *good_len gets the length of the prefix
 * made of whole, valid records: everything after it is a torn tail. */
static dlb_status scan(const char *path, const char *buf, size_t len,
                       json_t *records, int *torn, size_t *good_len,
                       struct dlb_error *err)
{
    *torn = 0;
    *good_len = 0;
    size_t line = 0;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - buf) : len;
        line++;
        /* A line without its newline was cut short by a crash or a full
         * disk, whatever it happens to contain: the append never ended. */
        if (!nl) {
            *torn = 1;
            return DLB_OK;
        }
        json_error_t jerr;
        json_t *rec = json_loadb(buf + pos, end - pos, JSON_REJECT_DUPLICATES,
                                 &jerr);
        if (!rec) {
            if (end + 1 == len) { /* last line: the crash hit its data */
                *torn = 1;
                return DLB_OK;
            }
            return dlb_errorf(err, DLB_ERR_INPUT,
                              "%s:%zu: not a JSON record: %s", path, line,
                              jerr.text);
        }
        char where[512];
        snprintf(where, sizeof where, "%s:%zu", path, line);
        dlb_status s = dlb_record_validate(rec, where, err);
        if (s != DLB_OK) {
            json_decref(rec);
            return s;
        }
        if (records && json_array_append_new(records, rec) != 0)
            return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory reading %s",
                              path);
        if (!records)
            json_decref(rec);
        pos = end + 1;
        *good_len = pos;
    }
    return DLB_OK;
}

dlb_status dlb_journal_read(const char *path, json_t **records, int *torn,
                            struct dlb_error *err)
{
    char *buf;
    size_t len, good;
    int t;
    dlb_status s = slurp(path, &buf, &len, err);
    if (s != DLB_OK)
        return s;
    json_t *arr = json_array();
    if (!arr) {
        free(buf);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory reading %s", path);
    }
    s = scan(path, buf, len, arr, &t, &good, err);
    free(buf);
    if (s != DLB_OK) {
        json_decref(arr);
        return s;
    }
    *records = arr;
    if (torn)
        *torn = t;
    return DLB_OK;
}

/* Cut a torn tail off an existing journal, so the next append does not
 * glue a good record onto it and turn it into a bad middle line. */
static dlb_status trim_torn_tail(struct dlb_journal *j, struct dlb_error *err)
{
    char *buf;
    size_t len, good;
    int torn;
    dlb_status s = slurp(j->path, &buf, &len, err);
    if (s != DLB_OK)
        return s;
    s = scan(j->path, buf, len, NULL, &torn, &good, err);
    free(buf);
    if (s != DLB_OK)
        return s;
    if (torn && (ftruncate(j->fd, (off_t)good) != 0 || fsync(j->fd) != 0))
        return dlb_errorf(err, DLB_ERR_IO,
                          "cannot cut the torn last line off %s: %s", j->path,
                          strerror(errno));
    j->size = (off_t)good;
    return DLB_OK;
}

dlb_status dlb_journal_open(const char *dir, struct dlb_journal **out,
                            struct dlb_error *err)
{
    struct dlb_journal *j = calloc(1, sizeof *j);
    if (!j || !(j->path = dlb_path_join(dir, JOURNAL_NAME))) {
        free(j);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory opening journal");
    }
    /* O_APPEND: each record is one write() at the end of the file. */
    j->fd = open(j->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
    if (j->fd < 0) {
        dlb_status s = dlb_errorf(err, DLB_ERR_IO, "cannot open %s: %s",
                                  j->path, strerror(errno));
        free(j->path);
        free(j);
        return s;
    }
    dlb_status s = trim_torn_tail(j, err);
    if (s == DLB_OK)
        s = dlb_fsync_dir(dir, err); /* the journal's name must survive too */
    if (s != DLB_OK) {
        dlb_journal_close(j);
        return s;
    }
    *out = j;
    return DLB_OK;
}

static dlb_status append(struct dlb_journal *j, json_t *record, int sync,
                         struct dlb_error *err)
{
    /* A record the reader would refuse must not reach the file: it would
     * make the whole journal unreadable for --resume. */
    if (dlb_record_validate(record, j->path, err) != DLB_OK)
        return DLB_ERR_INTERNAL;
    if (j->damaged)
        return dlb_errorf(err, DLB_ERR_IO,
                          "%s ends in a partial record after an earlier "
                          "write error; no more records are added to it",
                          j->path);
    /* Compact output never contains a raw newline (strings escape it), so
     * one record is exactly one line. Insertion order is kept. */
    char *text = json_dumps(record, JSON_COMPACT);
    if (!text)
        return dlb_errorf(err, DLB_ERR_NOMEM,
                          "cannot encode a record for %s", j->path);
    size_t len = strlen(text);
    text[len] = '\n'; /* replaces the NUL; the length is known */

    /* write(2) rather than stdio: no user-space buffer can hold back a
     * record, and a short write is seen at once. */
    size_t done = 0;
    int e = 0;
    while (done < len + 1) {
        ssize_t w = write(j->fd, text + done, len + 1 - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            e = w < 0 ? errno : EIO;
            break;
        }
        done += (size_t)w;
    }
    free(text);
    if (!e && sync && fsync(j->fd) != 0)
        e = errno;
    if (e) {
        /* Drop the partial line so that later appends stay readable; if
         * that fails, stop appending: the reader copes with one torn last
         * line, not with one in the middle. */
        if (ftruncate(j->fd, j->size) != 0)
            j->damaged = 1;
        return dlb_errorf(err, DLB_ERR_IO,
                          "cannot write a record to %s: %s; free some space "
                          "and use --resume to carry on", j->path,
                          strerror(e));
    }
    j->size += (off_t)(len + 1);
    j->unsynced = !sync;
    return DLB_OK;
}

dlb_status dlb_journal_append(struct dlb_journal *j, json_t *record,
                              struct dlb_error *err)
{
    return append(j, record, 1, err);
}

dlb_status dlb_journal_write(struct dlb_journal *j, json_t *record,
                             struct dlb_error *err)
{
    return append(j, record, 0, err);
}

dlb_status dlb_journal_sync(struct dlb_journal *j, struct dlb_error *err)
{
    if (!j->unsynced)
        return DLB_OK;
    if (fsync(j->fd) != 0) {
        /* What was written may or may not be on the disk: append no more,
         * so the journal's end stays the last thing known to be whole. */
        j->damaged = 1;
        return dlb_errorf(err, DLB_ERR_IO, "cannot sync %s: %s; free some "
                          "space and use --resume to carry on", j->path,
                          strerror(errno));
    }
    j->unsynced = 0;
    return DLB_OK;
}

void dlb_journal_close(struct dlb_journal *j)
{
    if (!j)
        return;
    /* A caller that cared about the error synced already; this is for a
     * path that did not (an error elsewhere), so the record still lands. */
    if (j->fd >= 0 && j->unsynced)
        fsync(j->fd);
    if (j->fd >= 0)
        close(j->fd);
    free(j->path);
    free(j);
}
