/* Finding a network file by name, in the order suites are found. */
#include "model/model_find.h"
#include "model/onnx_map.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model_file.h"

/* Try DIR/models/NAME.EXT; append it to `tried` for the message. */
static char *try_ext(const char *dir, size_t dir_len, const char *name,
                     const char *ext, char *tried, size_t tried_len)
{
    size_t len = dir_len + strlen(name) + 16, at = strlen(tried);
    char *p = malloc(len);
    if (!p)
        return NULL;
    snprintf(p, len, "%.*s/models/%s.%s", (int)dir_len, dir, name, ext);
    if (access(p, R_OK) == 0)
        return p;
    /* A folder reached two ways (the suite's own and ./suites) is said once. */
    const char *dup = strstr(tried, p);
    size_t pl = strlen(p);
    if (dup && (dup == tried || dup[-1] == ' ') && (dup[pl] == ',' || dup[pl] == '\0'))
        ;
    else if (at + 2 < tried_len)
        snprintf(tried + at, tried_len - at, "%s%s", at ? ", " : "", p);
    free(p);
    return NULL;
}

/* NAME.ini first: an ONNX export of an INI network does not hide it. */
static char *try_dir(const char *dir, size_t dir_len, const char *name,
                     char *tried, size_t tried_len)
{
    char *p = try_ext(dir, dir_len, name, "ini", tried, tried_len);
    return p ? p : try_ext(dir, dir_len, name, "onnx", tried, tried_len);
}

static int is_path(const char *model)
{
    size_t n = strlen(model);
    return strchr(model, '/') || (n > 4 && !strcmp(model + n - 4, ".ini")) ||
           dlb_onnx_is_path(model);
}

char *dlb_model_file_find(const char *model, const char *const *suite_paths,
                          size_t n_suite_paths, const char *installed_dir,
                          struct dlb_error *err)
{
    char tried[2048] = "", *p = NULL;
    const char *env = getenv("DLBENCH_SUITE_PATH");
    if (is_path(model)) {
        if (access(model, R_OK) != 0)
            dlb_errorf(err, DLB_ERR_INPUT, "model file %s cannot be read: %s",
                       model, strerror(errno));
        else if (!(p = strdup(model)))
            dlb_errorf(err, DLB_ERR_NOMEM, "model file %s: out of memory", model);
        return p;
    }
    for (size_t i = 0; !p && i < n_suite_paths; i++) {
        const char *sp = suite_paths[i];
        const char *slash = sp ? strrchr(sp, '/') : NULL;
        if (sp)
            p = slash ? try_dir(sp, (size_t)(slash - sp), model, tried,
                                sizeof tried)
                      : try_dir(".", 1, model, tried, sizeof tried);
    }
    if (!p)
        p = try_dir("./suites", 8, model, tried, sizeof tried);
    for (const char *d = env; !p && d && *d;) {
        size_t len = strcspn(d, ":");
        if (len)
            p = try_dir(d, len, model, tried, sizeof tried);
        d += len + (d[len] == ':');
    }
    if (!p && installed_dir)
        p = try_dir(installed_dir, strlen(installed_dir), model, tried,
                    sizeof tried);
    if (!p)
        dlb_errorf(err, DLB_ERR_INPUT, "model '%s' not found (looked for %s); "
                   "give a path to a model file, or put NAME.ini or NAME.onnx in a models/ "
                   "directory beside the suite", model, tried);
    return p;
}

dlb_status dlb_model_file_check(const char *model,
                                const char *const *suite_paths,
                                size_t n_suite_paths, const char *installed_dir,
                                char *reason, size_t len)
{
    struct dlb_error err = {"no model named"};
    struct dlb_model_spec *spec = NULL;
    dlb_status s = DLB_ERR_INPUT;
    char *path = NULL;
    if (model && *model)
        path = dlb_model_file_find(model, suite_paths, n_suite_paths,
                                   installed_dir, &err);
    if (path)
        s = dlb_model_file_load(path, &spec, &err);
    dlb_model_spec_free(spec);
    free(path);
    if (s != DLB_OK && reason && len)
        snprintf(reason, len, "%s", err.msg);
    return s;
}
