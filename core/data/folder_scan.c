/* dlb_folder_scan: directories read with readdir, names sorted with
 * strcmp so that the classes and the order of the files are the same on
 * every file system. */
#define _POSIX_C_SOURCE 200809L

#include "data/folder_scan.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

struct names {
    char **v;
    size_t n, cap;
};

static void names_free(struct names *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

static int names_add(struct names *s, const char *name)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    if (!(s->v[s->n] = strdup(name)))
        return -1;
    s->n++;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *join(const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = malloc(len);
    if (p)
        snprintf(p, len, "%s/%s", dir, name);
    return p;
}

static int is_image_name(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && (!strcasecmp(dot, ".png") || !strcasecmp(dot, ".jpg") ||
                   !strcasecmp(dot, ".jpeg"));
}

/* The entries of `dir`: subdirectories (want_dirs) or image files, hidden
 * names left out, sorted. Links are followed. */
static dlb_status list_dir(const char *dir, int want_dirs, struct names *out,
                           struct dlb_error *err)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    memset(out, 0, sizeof *out);
    if (!d)
        return dlb_errorf(err, DLB_ERR_IO, "%s: %s", dir, strerror(errno));
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (e->d_name[0] == '.' || (!want_dirs && !is_image_name(e->d_name)))
            continue;
        char *p = join(dir, e->d_name);
        int ok = p && stat(p, &st) == 0 &&
                 (want_dirs ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
        free(p);
        if (ok && names_add(out, e->d_name) != 0) {
            closedir(d);
            names_free(out);
            return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory listing %s", dir);
        }
    }
    closedir(d);
    if (out->n)
        qsort(out->v, out->n, sizeof *out->v, by_name);
    return DLB_OK;
}

static int is_dir(const char *dir, const char *name)
{
    struct stat st;
    char *p = join(dir, name);
    int ok = p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
    free(p);
    return ok;
}

static int list_add(struct dlb_file_list *l, char *path, uint8_t label)
{
    if ((l->n & (l->n - 1)) == 0) { /* 0, 1, 2, 4 ...: grow to double */
        size_t cap = l->n ? 2 * (size_t)l->n : 1;
        char **p = realloc(l->paths, cap * sizeof *p);
        if (p)
            l->paths = p;
        uint8_t *lb = realloc(l->labels, cap);
        if (lb)
            l->labels = lb;
        if (!p || !lb) {
            free(path);
            return -1;
        }
    }
    l->paths[l->n] = path;
    l->labels[l->n++] = label;
    return 0;
}

/* The images of class folder dir/name, label `label`: into test or train
 * (every DLB_FOLDER_HOLD_OUT-th to test when `hold_out`, else all into
 * `into`). */
static dlb_status add_class(struct dlb_folder_scan *s, const char *dir,
                            const char *name, uint8_t label, int hold_out,
                            struct dlb_file_list *into, struct dlb_error *err)
{
    struct names files;
    char *cdir = join(dir, name);
    if (!cdir)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    dlb_status st = list_dir(cdir, 0, &files, err);
    for (size_t i = 0; st == DLB_OK && i < files.n; i++) {
        struct dlb_file_list *l = !hold_out ? into
            : i % DLB_FOLDER_HOLD_OUT == DLB_FOLDER_HOLD_OUT - 1 ? &s->split[0]
            : &s->split[1];
        char *p = join(cdir, files.v[i]);
        if (!p || list_add(l, p, label) != 0)
            st = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory listing %s", cdir);
    }
    names_free(&files);
    free(cdir);
    return st;
}

static int class_index(const struct dlb_folder_scan *s, const char *name)
{
    for (uint32_t k = 0; k < s->n_classes; k++)
        if (!strcmp(s->classes[k], name))
            return (int)k;
    return -1;
}

/* The classes: the subfolders of `dir`. */
static dlb_status take_classes(struct dlb_folder_scan *s, const char *dir,
                               uint32_t max_classes, struct dlb_error *err)
{
    struct names cls;
    dlb_status st = list_dir(dir, 1, &cls, err);
    if (st != DLB_OK)
        return st;
    if (cls.n == 0)
        st = dlb_errorf(err, DLB_ERR_INPUT, "%s: no class folders: an image "
                        "folder holds a subfolder of PNG or JPEG files per "
                        "class", dir);
    else if (cls.n > max_classes)
        st = dlb_errorf(err, DLB_ERR_INPUT, "%s: %zu class folders; at most %u "
                        "are supported", dir, cls.n, max_classes);
    if (st != DLB_OK) {
        names_free(&cls);
        return st;
    }
    s->classes = cls.v;
    s->n_classes = (uint32_t)cls.n;
    return DLB_OK;
}

/* PATH/test (or val) beside PATH/train: its classes must be train's. */
static dlb_status scan_test_dir(struct dlb_folder_scan *s, const char *tdir,
                                struct dlb_error *err)
{
    struct names cls;
    dlb_status st = list_dir(tdir, 1, &cls, err);
    for (size_t i = 0; st == DLB_OK && i < cls.n; i++) {
        int k = class_index(s, cls.v[i]);
        if (k < 0)
            st = dlb_errorf(err, DLB_ERR_INPUT, "%s/%s: a test class the "
                            "training split does not have; rename it or add "
                            "it to the training split", tdir, cls.v[i]);
        else
            st = add_class(s, tdir, cls.v[i], (uint8_t)k, 0, &s->split[0], err);
    }
    names_free(&cls);
    return st;
}

dlb_status dlb_folder_scan(const char *root, uint32_t max_classes,
                           struct dlb_folder_scan *out, struct dlb_error *err)
{
    memset(out, 0, sizeof *out);
    const char *test = is_dir(root, "test") ? "test"
                       : is_dir(root, "val") ? "val" : NULL;
    int two = test && is_dir(root, "train");
    char *tr = two ? join(root, "train") : NULL, *te = two ? join(root, test) : NULL;
    dlb_status st = DLB_OK;
    if (two && (!tr || !te))
        st = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    if (st == DLB_OK)
        st = take_classes(out, two ? tr : root, max_classes, err);
    for (uint32_t k = 0; st == DLB_OK && k < out->n_classes; k++)
        st = add_class(out, two ? tr : root, out->classes[k], (uint8_t)k, !two,
                       &out->split[1], err);
    if (st == DLB_OK && two)
        st = scan_test_dir(out, te, err);
    out->held_out = !two;
    free(tr);
    free(te);
    if (st != DLB_OK)
        dlb_folder_scan_free(out);
    return st;
}

void dlb_folder_scan_free(struct dlb_folder_scan *s)
{
    for (uint32_t k = 0; k < s->n_classes; k++)
        free(s->classes[k]);
    free(s->classes);
    for (int i = 0; i < 2; i++) {
        for (uint32_t j = 0; j < s->split[i].n; j++)
            free(s->split[i].paths[j]);
        free(s->split[i].paths);
        free(s->split[i].labels);
    }
    memset(s, 0, sizeof *s);
}
