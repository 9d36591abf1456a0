/* Loading Fashion-MNIST from its IDX files and choosing between it and
 * synthetic data. */
#define _POSIX_C_SOURCE 200809L

#include "data/dataset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/folder.h"
#include "data/idx.h"

#define DATASET_CLASSES 10u

static const char dataset_install_hint[] =
    "install Debian's dataset-fashion-mnist package or set dataset_path to a "
    "directory holding the Fashion-MNIST IDX files";

static char *dataset_join(const char *dir, const char *name, const char *ext)
{
    size_t len = strlen(dir) + 1 + strlen(name) + strlen(ext) + 1;
    char *p = malloc(len);
    if (p)
        snprintf(p, len, "%s/%s%s", dir, name, ext);
    return p;
}

/* Find dir/name.gz, else dir/name. *path is the file found, or the .gz name
 * (for messages) with *found = 0. */
static dlb_status dataset_find(const char *dir, const char *name, char **path,
                               int *found, struct dlb_error *err)
{
    static const char *const exts[] = { ".gz", "" };
    struct stat st;

    *found = 0;
    *path = NULL;
    for (int i = 0; i < 2; i++) {
        char *p = dataset_join(dir, name, exts[i]);
        if (!p)
            return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
        if (stat(p, &st) == 0) {
            free(*path); /* the .gz name kept for messages, if any */
            *found = 1;
            *path = p;
            return DLB_OK;
        }
        if (errno != ENOENT && errno != ENOTDIR) {
            dlb_status s = dlb_errorf(err, DLB_ERR_IO, "%s: %s", p,
                                      strerror(errno));
            free(p);
            return s;
        }
        if (i == 0)
            *path = p;
        else
            free(p);
    }
    return DLB_OK;
}

/* The two files of one split; found_images and found_labels say which
 * exist. */
struct dataset_files {
    char *images, *labels;
    int found_images, found_labels;
};

static dlb_status dataset_locate(const char *dir, int train,
                                 struct dataset_files *f,
                                 struct dlb_error *err)
{
    const char *split = train ? "train" : "t10k";
    char name[64];
    dlb_status s;

    memset(f, 0, sizeof *f);
    snprintf(name, sizeof name, "%s-images-idx3-ubyte", split);
    s = dataset_find(dir, name, &f->images, &f->found_images, err);
    if (s != DLB_OK)
        return s;
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte", split);
    s = dataset_find(dir, name, &f->labels, &f->found_labels, err);
    if (s != DLB_OK) {
        free(f->images);
        f->images = NULL;
    }
    return s;
}

static void dataset_files_free(struct dataset_files *f)
{
    free(f->images);
    free(f->labels);
    memset(f, 0, sizeof *f);
}

static dlb_status dataset_check(const struct dlb_idx *im, const char *im_path,
                                const struct dlb_idx *lb, const char *lb_path,
                                struct dlb_error *err)
{
    if (im->dims[0] != lb->dims[0])
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "mismatched counts: %s has %lu images, %s has %lu "
                          "labels", im_path, (unsigned long)im->dims[0],
                          lb_path, (unsigned long)lb->dims[0]);
    for (size_t i = 0; i < lb->size; i++)
        if (lb->data[i] >= DATASET_CLASSES)
            return dlb_errorf(err, DLB_ERR_INPUT,
                              "%s: label %u of item %zu is out of range: "
                              "expected 0 to %u", lb_path, lb->data[i], i,
                              DATASET_CLASSES - 1);
    return DLB_OK;
}

static dlb_status dataset_read(const char *im_path, const char *lb_path,
                               struct dlb_dataset *out, struct dlb_error *err)
{
    struct dlb_idx im, lb;
    dlb_status s;

    s = dlb_idx_read(im_path, 3, &im, err);
    if (s != DLB_OK)
        return s;
    s = dlb_idx_read(lb_path, 1, &lb, err);
    if (s == DLB_OK)
        s = dataset_check(&im, im_path, &lb, lb_path, err);
    if (s != DLB_OK) {
        dlb_idx_free(&im);
        dlb_idx_free(&lb);
        return s;
    }
    /* The IDX layout has no channel axis: one grey channel. */
    out->n = im.dims[0];
    out->c = 1;
    out->h = im.dims[1];
    out->w = im.dims[2];
    out->images = im.data;
    out->labels = lb.data;
    out->classes = DATASET_CLASSES;
    out->synthetic = 0;
    out->mean = DLB_FASHION_MNIST_MEAN;
    out->std = DLB_FASHION_MNIST_STD;
    return DLB_OK;
}

dlb_status dlb_dataset_load(const char *dir, int train, struct dlb_dataset *out,
                            struct dlb_error *err)
{
    struct dataset_files f;
    dlb_status s;

    memset(out, 0, sizeof *out);
    s = dataset_locate(dir, train, &f, err);
    if (s != DLB_OK)
        return s;
    if (!f.found_images || !f.found_labels)
        s = dlb_errorf(err, DLB_ERR_IO, "%s: %s; %s",
                       f.found_images ? f.labels : f.images, strerror(ENOENT),
                       dataset_install_hint);
    else
        s = dataset_read(f.images, f.labels, out, err);
    if (s == DLB_OK) {
        out->source = f.images; /* the dataset owns it now */
        f.images = NULL;
    }
    dataset_files_free(&f);
    return s;
}

/* The description of dlb_dataset's comment. */
static dlb_status dataset_describe(struct dlb_dataset *d, const char *name,
                                   uint64_t seed, struct dlb_error *err)
{
    char buf[160];
    if (d->synthetic)
        snprintf(buf, sizeof buf, "synthetic %ux%ux%u (seed %llu)", d->c, d->h,
                 d->w, (unsigned long long)seed);
    else if (d->padded_from_h)
        snprintf(buf, sizeof buf, "%s padded %ux%u -> %ux%u", name,
                 d->padded_from_h, d->padded_from_w, d->h, d->w);
    else
        snprintf(buf, sizeof buf, "%s %ux%ux%u", name, d->c, d->h, d->w);
    free(d->description);
    d->description = strdup(buf);
    if (!d->description) {
        dlb_dataset_free(d);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    return DLB_OK;
}

static int want_any(const struct dlb_data_want *want)
{
    return want && (want->c || want->h || want->w);
}

/* Synthetic data at the model's shape (Fashion-MNIST's without one), as
 * many images as dlb_synthetic_count allows. */
static dlb_status dataset_make_synthetic(int train, uint64_t seed,
                                         const struct dlb_data_want *want,
                                         struct dlb_dataset *out,
                                         struct dlb_error *err)
{
    uint32_t c = 1, h = 28, w = 28;
    if (want_any(want)) {
        c = want->c;
        h = want->h;
        w = want->w;
        if (want->classes && want->classes < DATASET_CLASSES)
            return dlb_errorf(err, DLB_ERR_INPUT, "synthetic data have %u "
                              "classes; the model has %u: give it %u or more",
                              DATASET_CLASSES, want->classes, DATASET_CLASSES);
    }
    uint32_t n = dlb_synthetic_count(train, c, h, w);
    if (n == 0)
        return dlb_errorf(err, DLB_ERR_INPUT, "synthetic data: one %ux%ux%u "
                          "image exceeds the %u MiB a split may hold", c, h, w,
                          DLB_SYNTHETIC_MAX_BYTES >> 20);
    dlb_status s = dlb_dataset_synthetic_shaped(n, seed, train, c, h, w, out);
    if (s != DLB_OK)
        return dlb_errorf(err, s, "synthetic data: out of memory for %lu "
                          "images of %ux%ux%u", (unsigned long)n, c, h, w);
    return dataset_describe(out, "synthetic", seed, err);
}

/* Load the files and fit them to the model: padded, or refused. */
static dlb_status dataset_load_fit(const char *path, int train,
                                   const struct dlb_data_want *want,
                                   struct dlb_dataset *out,
                                   struct dlb_error *err)
{
    int pad = 0;
    dlb_status s = dlb_dataset_load(path, train, out, err);
    if (s == DLB_OK)
        s = dlb_dataset_fit(out, want, &pad, err);
    if (s == DLB_OK && pad)
        s = dlb_dataset_pad(out, want->h, want->w, err);
    if (s == DLB_OK)
        return dataset_describe(out, "Fashion-MNIST", 0, err);
    dlb_dataset_free(out);
    return s;
}

/* "auto" with the files present: used when they fit the model, else
 * synthetic data with the reason in `why`. */
static dlb_status dataset_auto_files(const char *path, int train,
                                     uint64_t seed,
                                     const struct dlb_data_want *want,
                                     struct dlb_dataset *out, char *why,
                                     size_t why_len, struct dlb_error *err)
{
    struct dlb_dataset d;
    int pad = 0;
    dlb_status s = dlb_dataset_load(path, train, &d, err);
    if (s != DLB_OK)
        return s;
    if (dlb_dataset_fit(&d, want, &pad, err) != DLB_OK) {
        if (why && why_len)
            snprintf(why, why_len, "Fashion-MNIST's %ux%ux%u images in %s do "
                     "not fit the model's %ux%ux%u input", d.c, d.h, d.w, path,
                     want->c, want->h, want->w);
        dlb_dataset_free(&d);
        return dataset_make_synthetic(train, seed, want, out, err);
    }
    if (pad && (s = dlb_dataset_pad(&d, want->h, want->w, err)) != DLB_OK) {
        dlb_dataset_free(&d);
        return s;
    }
    *out = d;
    return dataset_describe(out, "Fashion-MNIST", 0, err);
}

dlb_status dlb_dataset_open_for(const char *mode, const char *path, int train,
                                uint64_t seed, const struct dlb_data_want *want,
                                struct dlb_dataset *out, char *why,
                                size_t why_len, struct dlb_error *err)
{
    struct dataset_files f;
    dlb_status s;

    memset(out, 0, sizeof *out);
    if (why && why_len)
        why[0] = '\0';
    if (!mode || !*mode)
        mode = "auto";
    if (!path || !*path)
        path = DLB_DATASET_DEFAULT_DIR;

    if (strcmp(mode, "synthetic") == 0)
        return dataset_make_synthetic(train, seed, want, out, err);
    if (strcmp(mode, "fashion-mnist") == 0)
        return dataset_load_fit(path, train, want, out, err);
    if (strncmp(mode, DLB_DATASET_FOLDER_PREFIX,
                strlen(DLB_DATASET_FOLDER_PREFIX)) == 0 &&
        mode[strlen(DLB_DATASET_FOLDER_PREFIX)])
        return dlb_folder_open(mode + strlen(DLB_DATASET_FOLDER_PREFIX), train,
                               want, out, err);
    if (strcmp(mode, "auto") != 0)
        return dlb_errorf(err, DLB_ERR_INPUT, "dataset '%s' is not one of "
                          "auto, fashion-mnist, synthetic, folder:PATH", mode);

    s = dataset_locate(path, train, &f, err);
    if (s != DLB_OK)
        return s;
    if (f.found_images != f.found_labels)
        /* Half an installation is a broken one: say so rather than hide it
         * behind synthetic data. */
        s = dlb_errorf(err, DLB_ERR_INPUT, "%s exists but %s does not; "
                       "reinstall dataset-fashion-mnist, fix dataset_path "
                       "or set dataset = synthetic",
                       f.found_images ? f.images : f.labels,
                       f.found_images ? f.labels : f.images);
    else if (f.found_images)
        s = dataset_auto_files(path, train, seed, want, out, why, why_len, err);
    else {
        if (why && why_len)
            snprintf(why, why_len, "Fashion-MNIST not found in %s (install "
                     "the dataset-fashion-mnist package for real figures)",
                     path);
        s = dataset_make_synthetic(train, seed, want, out, err);
    }
    dataset_files_free(&f);
    return s;
}

dlb_status dlb_dataset_open(const char *mode, const char *path, int train,
                            uint64_t seed, struct dlb_dataset *out,
                            int *announced_synthetic, struct dlb_error *err)
{
    char why[512];
    dlb_status s = dlb_dataset_open_for(mode, path, train, seed, NULL, out,
                                        why, sizeof why, err);
    if (announced_synthetic)
        *announced_synthetic = s == DLB_OK && why[0];
    return s;
}

void dlb_dataset_free(struct dlb_dataset *d)
{
    free(d->images);
    free(d->labels);
    free(d->source);
    free(d->description);
    dlb_folder_free(d->folder);
    memset(d, 0, sizeof *d);
}
