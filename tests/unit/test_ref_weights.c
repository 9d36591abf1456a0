/* Unit tests of core/train/ref_weights.c's dlb_ref_weights_prepare: where
 * the process has one thread the reference weights are trained in a
 * forked copy of it (util/apart.h), saved to the cache and found there;
 * where it runs another thread they are trained in the process itself;
 * both train the very same weights (the cache files are byte-identical);
 * a second call trains nothing; and an error in the copy (a backend that
 * does not exist) comes back with its message. LeNet on the ref backend,
 * a small synthetic training set, a cache directory of its own. */
#include "check.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "ckpt/weights_cache.h"
#include "data/dataset.h"
#include "model_fixture.h"
#include "train/ref_weights.h"

/* The log goes to a file that a forked copy appends to as well. */
static FILE *log_file;

static void test_log(const struct dlb_host *h, enum dlb_log_level lvl,
                     const char *fmt, ...)
{
    (void)h;
    (void)lvl;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(log_file, fmt, ap);
    va_end(ap);
    fputc('\n', log_file);
    fflush(log_file);
}

static struct dlb_dataset train_set;
static int have_train;

static dlb_status load_train(void *ctx, const struct dlb_dataset **out,
                             struct dlb_error *err)
{
    (void)ctx;
    if (!have_train && dlb_dataset_synthetic(256, 7, 1, &train_set) != DLB_OK)
        return dlb_errorf(err, DLB_ERR_NOMEM, "no synthetic training set");
    have_train = 1;
    *out = &train_set;
    return DLB_OK;
}

/* The log written since offset `from`, NUL-terminated (malloc'ed). */
static char *log_since(const char *path, long from)
{
    FILE *f = fopen(path, "r");
    char *buf = calloc(1, 1 << 16);
    if (f && buf && fseek(f, from, SEEK_SET) == 0)
        (void)!fread(buf, 1, (1 << 16) - 1, f);
    if (f)
        fclose(f);
    return buf;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    *len = 0;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        buf = n > 0 ? malloc((size_t)n) : NULL;
        if (buf && fseek(f, 0, SEEK_SET) == 0 &&
            fread(buf, 1, (size_t)n, f) == (size_t)n)
            *len = (size_t)n;
    }
    fclose(f);
    return buf;
}

static pthread_mutex_t hold = PTHREAD_MUTEX_INITIALIZER;

static void *waits(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&hold);
    pthread_mutex_unlock(&hold);
    return NULL;
}

int main(void)
{
    char dir[512], logp[600], cache[1024];
    check_temp_template(dir, sizeof dir, "dlb-ref-weights-XXXXXX");
    if (!mkdtemp(dir))
        return 99;
    setenv("DLBENCH_CACHE_DIR", dir, 1);
    snprintf(logp, sizeof logp, "%s/log", dir);
    log_file = fopen(logp, "a");
    if (!log_file)
        return 99;
    struct dlb_model_spec *spec = fx_load_spec("suites/models/lenet.ini");
    if (!spec)
        return check_exit();
    struct dlb_host host = {.struct_size = sizeof host, .log = test_log};
    struct dlb_ref_weights_req req = {"lenet", 42, 6, 0.05f, 0.9f,
                                      "synthetic", load_train, NULL, &host};
    struct dlb_backend_config cfg = {.threads = 1, .seed = 42};
    struct dlb_error err = {""};
    char *path = NULL;
    CHECK(dlb_weights_cache_path("lenet", 42, 6, &path, &err) == DLB_OK);
    if (!path)
        return check_exit();
    snprintf(cache, sizeof cache, "%s", path);
    free(path);

    /* one thread: trained apart, found in the cache */
    long at = ftell(log_file);
    CHECK(dlb_ref_weights_prepare(spec, &req, "ref", &cfg, 42, &err) == DLB_OK);
    char *said = log_since(logp, at);
    CHECK(said && strstr(said, "in a process of its own") != NULL);
    CHECK(!have_train); /* the copy read the training set, not this process */
    free(said);
    size_t n_apart = 0, n_here = 0;
    char *apart = slurp(cache, &n_apart);
    CHECK(apart != NULL && n_apart > 0);

    /* cached: nothing trained */
    at = ftell(log_file);
    CHECK(dlb_ref_weights_prepare(spec, &req, "ref", &cfg, 42, &err) == DLB_OK);
    said = log_since(logp, at);
    CHECK(said && strstr(said, "training reference weights") == NULL);
    free(said);

    /* another thread: trained here, to the same bytes */
    CHECK(unlink(cache) == 0);
    pthread_t t;
    pthread_mutex_lock(&hold);
    CHECK(pthread_create(&t, NULL, waits, NULL) == 0);
    at = ftell(log_file);
    CHECK(dlb_ref_weights_prepare(spec, &req, "ref", &cfg, 42, &err) == DLB_OK);
    pthread_mutex_unlock(&hold);
    pthread_join(t, NULL);
    said = log_since(logp, at);
    CHECK(said && strstr(said, "in this process") != NULL);
    free(said);
    char *here = slurp(cache, &n_here);
    CHECK(here && n_here == n_apart && memcmp(here, apart, n_apart) == 0);

    /* the copy's error, with its message */
    CHECK(unlink(cache) == 0);
    err.msg[0] = '\0';
    CHECK(dlb_ref_weights_prepare(spec, &req, "nope", &cfg, 42, &err) != DLB_OK);
    CHECK(strstr(err.msg, "nope") != NULL);
    CHECK(access(cache, F_OK) != 0);

    free(apart);
    free(here);
    if (have_train)
        dlb_dataset_free(&train_set);
    dlb_model_spec_free(spec);
    fclose(log_file);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    (void)!system(cmd);
    return check_exit();
}
