/* Run directories: where one run's journal and result files live. */
#define _POSIX_C_SOURCE 200809L

#include "results/results.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* mkdir -p: create each missing component in turn. */
static dlb_status make_path(const char *dir, struct dlb_error *err)
{
    char *p = strdup(dir);
    if (!p)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory creating %s", dir);
    dlb_status s = DLB_OK;
    for (char *c = p + 1;; c++) {
        if (*c != '/' && *c != '\0')
            continue;
        char saved = *c;
        *c = '\0';
        struct stat st;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            s = dlb_errorf(err, DLB_ERR_IO, "cannot create directory %s: %s",
                           p, strerror(errno));
            break;
        }
        if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
            s = dlb_errorf(err, DLB_ERR_IO,
                           "cannot create directory %s: a file of that name "
                           "is in the way", p);
            break;
        }
        *c = saved;
        if (saved == '\0')
            break;
    }
    free(p);
    return s;
}

dlb_status dlb_rundir_create(const char *dir, struct dlb_error *err)
{
    if (!dir || !*dir)
        return dlb_errorf(err, DLB_ERR_INPUT, "empty run directory name");
    dlb_status s = make_path(dir, err);
    if (s == DLB_OK)
        s = dlb_rundir_lock(dir, err); /* before the look: two runs race here */
    if (s != DLB_OK)
        return s;
    DIR *d = opendir(dir);
    if (!d)
        return dlb_errorf(err, DLB_ERR_IO, "cannot open directory %s: %s",
                          dir, strerror(errno));
    int empty = 1;
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            strcmp(e->d_name, DLB_RUNDIR_LOCK) != 0) {
            empty = 0;
            break;
        }
    }
    closedir(d);
    if (!empty)
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "run directory %s already exists and is not empty; "
                          "choose another --out or use --resume %s", dir, dir);
    return DLB_OK;
}

/* Suite and host names become one path component each: anything that could
 * climb or split the path, or needs quoting in a shell, becomes '_'. */
static void sanitize(char *s)
{
    for (; *s; s++) {
        int ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                 (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' ||
                 *s == '.';
        if (!ok)
            *s = '_';
    }
}

char *dlb_rundir_default(const char *base, const char *suite_name)
{
    char host[256] = "";
    if (gethostname(host, sizeof host) != 0 || !host[0])
        strcpy(host, "unknown-host");
    host[sizeof host - 1] = '\0';
    host[strcspn(host, ".")] = '\0'; /* short name, as `hostname -s` */
    sanitize(host);

    char suite[256];
    snprintf(suite, sizeof suite, "%s",
             suite_name && *suite_name ? suite_name : "suite");
    sanitize(suite);
    if (suite[0] == '.') /* never "." or ".." */
        suite[0] = '_';

    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) ||
        !strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm))
        strcpy(stamp, "00000000T000000Z");

    const char *b = base && *base ? base : "results";
    size_t n = strlen(b) + strlen(suite) + strlen(stamp) + strlen(host) + 4;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%s/%s/%s-%s", b, suite, stamp, host);
    return out;
}

dlb_status dlb_fsync_dir(const char *dir, struct dlb_error *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return dlb_errorf(err, DLB_ERR_IO, "cannot open directory %s: %s",
                          dir, strerror(errno));
    /* Some file systems refuse fsync on a directory (EINVAL); their
     * renames are then as durable as they can be made. */
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    if (rc != 0 && e != EINVAL)
        return dlb_errorf(err, DLB_ERR_IO, "cannot sync directory %s: %s",
                          dir, strerror(e));
    return DLB_OK;
}

typedef int (*emit_fn)(FILE *f, void *arg);

/* DIR/NAME whole or not at all: written to DIR/.NAME.tmp, synced, renamed. */
static dlb_status write_whole(const char *dir, const char *name, emit_fn emit,
                              void *arg, struct dlb_error *err)
{
    char tmp[4096], final[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name) >= sizeof tmp ||
        (size_t)snprintf(final, sizeof final, "%s/%s", dir, name) >= sizeof final)
        return dlb_errorf(err, DLB_ERR_INPUT, "run directory name too long: %s", dir);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", tmp,
                          strerror(errno));
    errno = 0; /* stdio may fail without setting it */
    int bad = emit(f, arg) != 0;
    bad = bad || fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0;
    int e = errno ? errno : EIO;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad || rename(tmp, final) != 0) {
        if (!bad)
            e = errno;
        unlink(tmp);
        return dlb_errorf(err, DLB_ERR_IO, "cannot write %s: %s", final,
                          strerror(e));
    }
    return DLB_OK;
}

static int emit_copy(FILE *out, void *arg)
{
    FILE *in = arg;
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            return -1;
    return ferror(in) ? -1 : 0;
}

static int emit_json(FILE *out, void *arg)
{
    return json_dumpf(arg, out, JSON_INDENT(2)) == 0 && fputc('\n', out) != EOF
               ? 0 : -1;
}

dlb_status dlb_rundir_setup(const char *dir, const char *suite_path,
                            json_t *invocation, struct dlb_error *err)
{
    FILE *in = fopen(suite_path, "rb");
    if (!in)
        return dlb_errorf(err, DLB_ERR_IO, "cannot read %s: %s", suite_path,
                          strerror(errno));
    dlb_status s = write_whole(dir, "suite.ini", emit_copy, in, err);
    fclose(in);
    /* invocation.json last, after suite.ini is whole: its presence is what
     * makes the directory resumable. The directory is synced so both
     * names outlive a crash of the machine, not only of dlbench. */
    if (s == DLB_OK)
        s = write_whole(dir, "invocation.json", emit_json, invocation, err);
    if (s == DLB_OK)
        s = dlb_fsync_dir(dir, err);
    return s;
}

dlb_status dlb_rundir_write_json(const char *dir, const char *name,
                                 json_t *doc, struct dlb_error *err)
{
    dlb_status s = write_whole(dir, name, emit_json, doc, err);
    return s == DLB_OK ? dlb_fsync_dir(dir, err) : s;
}

dlb_status dlb_rundir_check_set_up(const char *dir, struct dlb_error *err)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "--resume %s: no such run directory (a run stopped "
                          "before it created its directory measured nothing: "
                          "start it again with --suite)", dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/invocation.json", dir);
    if (stat(path, &st) != 0)
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "--resume %s: no invocation.json there, so this run "
                          "was stopped while its directory was being set up, "
                          "before any configuration ran: there is nothing to "
                          "resume; remove %s and start the run again with "
                          "--suite", dir, dir);
    return DLB_OK;
}
