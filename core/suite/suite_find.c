/* Finding a suite by name: `dlbench run amp` looks for amp.ini in ./suites,
 * $DLBENCH_SUITE_PATH and the installed suites, in that order. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "suite/param.h"
#include "suite/suite.h"

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 6;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s.ini", dir, name);
    return p;
}

/* The search path as one malloc'ed colon-separated string. */
static char *search_path(const char *installed_dir)
{
    const char *env = getenv("DLBENCH_SUITE_PATH");
    size_t n = strlen("./suites") + (env ? strlen(env) : 0) +
               (installed_dir ? strlen(installed_dir) : 0) + 3;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "./suites%s%s%s%s", env && *env ? ":" : "",
                 env ? env : "", installed_dir ? ":" : "",
                 installed_dir ? installed_dir : "");
    return p;
}

/* The closest suite name in the search path, copied into buf; 0 if none. */
static int closest_suite(const char *name, const char *path, char *buf,
                         size_t len)
{
    enum { MAX_NAMES = 256 };
    char *names[MAX_NAMES];
    size_t n_names = 0;
    char *copy = strdup(path), *save = NULL;
    for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir;
         dir = strtok_r(NULL, ":", &save)) {
        DIR *d = opendir(dir);
        struct dirent *de;
        while (d && n_names < MAX_NAMES && (de = readdir(d))) {
            size_t n = strlen(de->d_name);
            if (n > 4 && !strcmp(de->d_name + n - 4, ".ini") &&
                (names[n_names] = strndup(de->d_name, n - 4)))
                n_names++;
        }
        if (d)
            closedir(d);
    }
    free(copy);
    const char *best = dlb_suggest(name, (const char *const *)names, n_names);
    if (best)
        snprintf(buf, len, "%s", best);
    for (size_t k = 0; k < n_names; k++)
        free(names[k]);
    return best != NULL;
}

char *dlb_suite_find(const char *name_or_path, const char *installed_dir,
                     struct dlb_error *err)
{
    if (is_file(name_or_path)) {
        char *p = strdup(name_or_path);
        if (!p)
            dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
        return p;
    }
    if (strchr(name_or_path, '/')) {
        dlb_errorf(err, DLB_ERR_INPUT, "cannot open suite %s: no such file",
                   name_or_path);
        return NULL;
    }
    char *path = search_path(installed_dir);
    if (!path) {
        dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
        return NULL;
    }
    /* "amp.ini" and "amp" both name the suite amp. */
    char name[256];
    size_t n = strlen(name_or_path);
    if (n > 4 && !strcmp(name_or_path + n - 4, ".ini"))
        n -= 4;
    snprintf(name, sizeof name, "%.*s", (int)n, name_or_path);
    char *copy = strdup(path), *save = NULL, *found = NULL;
    for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir && !found;
         dir = strtok_r(NULL, ":", &save)) {
        char *cand = join(dir, name);
        if (cand && is_file(cand))
            found = cand;
        else
            free(cand);
    }
    free(copy);
    if (!found) {
        char best[256];
        if (closest_suite(name, path, best, sizeof best))
            dlb_errorf(
                err, DLB_ERR_INPUT,
                "no suite '%s' (did you mean '%s'?); looked for %s.ini in %s",
                name, best, name, path);
        else
            dlb_errorf(err, DLB_ERR_INPUT,
                       "no suite '%s'; looked for %s.ini in %s", name, name,
                       path);
    }
    free(path);
    return found;
}
