/* The one rule for dlbench's cache directory (core/util/cache_dir.c),
 * which the weights cache, the peak probe's cache, cuDNN's algorithm
 * cache and the plugins' host->cache_dir all use: $DLBENCH_CACHE_DIR,
 * else $XDG_CACHE_HOME/dlbench, else $HOME/.cache/dlbench, an empty
 * variable counting as unset; an error saying what to set when none is,
 * or when the name does not fit. mkdir -p: nested directories made, an
 * existing one accepted, a path through a file refused with its name. */
#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt/weights_cache.h"
#include "peak/peak.h"
#include "util/cache_dir.h"

static void env3(const char *d, const char *x, const char *h)
{
    const char *names[3] = {"DLBENCH_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
    const char *v[3] = {d, x, h};
    for (int i = 0; i < 3; i++)
        if (v[i])
            setenv(names[i], v[i], 1);
        else
            unsetenv(names[i]);
}

static int dir_is(const char *want)
{
    char buf[256];
    return dlb_cache_dir(buf, sizeof buf, NULL) == DLB_OK && !strcmp(buf, want);
}

static void test_order(void)
{
    struct dlb_error err = {""};
    char buf[256], small[8];
    env3("/d", "/x", "/h");
    CHECK(dir_is("/d"));
    env3("", "/x", "/h");
    CHECK(dir_is("/x/dlbench"));
    env3(NULL, "", "/h");
    CHECK(dir_is("/h/.cache/dlbench"));
    env3(NULL, NULL, "");
    CHECK(dlb_cache_dir(buf, sizeof buf, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "DLBENCH_CACHE_DIR") != NULL);
    env3("/a/long/directory", NULL, NULL);
    CHECK(dlb_cache_dir(small, sizeof small, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "too long") != NULL);
    /* the users of the rule agree with it */
    env3(NULL, "/x", "/h");
    CHECK(dlb_peak_cache_path(buf, sizeof buf, &err) == DLB_OK);
    CHECK(!strcmp(buf, "/x/dlbench/peak.json"));
}

static void test_make_dirs(void)
{
    struct dlb_error err = {""};
    const char *tmp = getenv("TMPDIR");
    char root[200], path[256], *w = NULL;
    struct stat st;
    snprintf(root, sizeof root, "%s/dlb-cache-dir-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(root) != NULL);
    snprintf(path, sizeof path, "%s/a/b/c", root);
    CHECK(dlb_make_dirs(path, &err) == DLB_OK);
    CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK(dlb_make_dirs(path, &err) == DLB_OK); /* already there */
    /* through a file: refused, naming the directory */
    snprintf(path, sizeof path, "%s/file", root);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
    snprintf(path, sizeof path, "%s/file/sub", root);
    CHECK(dlb_make_dirs(path, &err) == DLB_ERR_IO);
    CHECK(strstr(err.msg, "/file") != NULL);
    /* the weights cache makes its directory under the rule's */
    env3(root, NULL, NULL);
    CHECK(dlb_weights_cache_path("models/lenet.ini", 42, 10, &w, &err) == DLB_OK);
    snprintf(path, sizeof path, "%s/weights/lenet-s42-n10.safetensors", root);
    CHECK(w && !strcmp(w, path));
    snprintf(path, sizeof path, "%s/weights", root);
    CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    free(w);
    rmdir(path);
    snprintf(path, sizeof path, "%s/file", root);
    unlink(path);
    static const char *const made[] = {"/a/b/c", "/a/b", "/a", ""};
    for (size_t i = 0; i < sizeof made / sizeof *made; i++) {
        snprintf(path, sizeof path, "%s%s", root, made[i]);
        rmdir(path);
    }
}

int main(void)
{
    test_order();
    test_make_dirs();
    return check_exit();
}
