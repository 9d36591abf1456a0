/* An image folder as a data set: the listing kept, images decoded when a
 * batch is filled, corrupt files counted and stood in for. */
#define _POSIX_C_SOURCE 200809L

#include "data/folder.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/folder_scan.h"
#include "data/image_decode.h"
#include "data/image_resize.h"

struct dlb_folder {
    struct dlb_folder_scan scan;
    const struct dlb_file_list *files; /* the split's, in scan */
    uint8_t *bad;                       /* per file: failed to decode */
    uint32_t corrupt;                   /* files with bad set */
    void (*log)(void *ctx, const char *line);
    void *log_ctx;
};

static void say(struct dlb_folder *f, const char *line)
{
    if (f->log)
        f->log(f->log_ctx, line);
    else
        fprintf(stderr, "dlbench: warning: %s\n", line);
}

/* Count file k as corrupt and say so, the first time only. */
static void mark_bad(struct dlb_folder *f, uint32_t k, const char *why)
{
    if (__atomic_exchange_n(&f->bad[k], 1, __ATOMIC_RELAXED))
        return;
    __atomic_fetch_add(&f->corrupt, 1, __ATOMIC_RELAXED);
    char line[1200];
    snprintf(line, sizeof line, "skipping a corrupt image: %s; the next "
             "image of the split stands in for it", why);
    say(f, line);
}

/* File k decoded and cropped into out; its status (err says why). */
static dlb_status load_one(struct dlb_folder *f, uint32_t k, uint32_t c,
                           uint32_t h, uint32_t w, int augment, uint64_t draw,
                           float mean, float std, float *out,
                           struct dlb_error *err)
{
    struct dlb_image im;
    struct dlb_crop cr;
    /* a scaled JPEG decode must still cover the training crop's margin */
    uint32_t mh = augment ? h * DLB_CROP_MARGIN_NUM / DLB_CROP_MARGIN_DEN : h;
    uint32_t mw = augment ? w * DLB_CROP_MARGIN_NUM / DLB_CROP_MARGIN_DEN : w;
    dlb_status s = dlb_image_decode(f->files->paths[k], c, mh, mw, &im, err);
    if (s != DLB_OK)
        return s;
    dlb_crop_plan(im.h, im.w, h, w, augment, draw, &cr);
    s = dlb_image_crop(&im, &cr, mean, std, out);
    dlb_image_free(&im);
    if (s != DLB_OK)
        dlb_errorf(err, s, "%s: out of memory", f->files->paths[k]);
    return s;
}

dlb_status dlb_folder_fill(const struct dlb_dataset *d, uint32_t k,
                           int augment, uint64_t draw, float *out,
                           int32_t *label)
{
    struct dlb_folder *f = d->folder;
    for (uint32_t tries = 0; tries < d->n; tries++, k = (k + 1) % d->n) {
        struct dlb_error err = {""};
        if (__atomic_load_n(&f->bad[k], __ATOMIC_RELAXED))
            continue;
        dlb_status s = load_one(f, k, d->c, d->h, d->w, augment, draw, d->mean,
                                d->std, out, &err);
        if (s == DLB_OK) {
            if (label)
                *label = d->labels[k];
            return DLB_OK;
        }
        if (s == DLB_ERR_NOMEM)
            return s;
        mark_bad(f, k, err.msg);
    }
    return DLB_ERR_INPUT;
}

/* Mean and deviation of x/255 over the crops of up to
 * DLB_FOLDER_STATS_SAMPLE training files spread over the split. Files that
 * fail are counted against `f` only when it is the training split's. */
static dlb_status pixel_stats(struct dlb_folder *f, const struct dlb_file_list *tr,
                              const struct dlb_data_want *want, int own,
                              float *mean, float *std, struct dlb_error *err)
{
    size_t per = (size_t)want->c * want->h * want->w;
    uint32_t n = tr->n < DLB_FOLDER_STATS_SAMPLE ? tr->n : DLB_FOLDER_STATS_SAMPLE;
    float *px = malloc(per * sizeof *px);
    double sum = 0, sq = 0, count = 0;
    struct dlb_folder probe = *f;
    struct dlb_error first = {""};
    if (!px)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    probe.files = tr;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = (uint32_t)((uint64_t)i * tr->n / n);
        struct dlb_error e = {""};
        dlb_status s = load_one(&probe, k, want->c, want->h, want->w, 0, 0, 0.0f,
                                1.0f, px, &e);
        if (s == DLB_ERR_NOMEM) {
            free(px);
            return dlb_errorf(err, s, "%s", e.msg);
        }
        if (s != DLB_OK) {
            if (own)
                mark_bad(f, k, e.msg);
            if (!first.msg[0])
                first = e;
            continue;
        }
        for (size_t p = 0; p < per; p++) {
            sum += px[p];
            sq += (double)px[p] * px[p];
        }
        count += (double)per;
    }
    free(px);
    if (count == 0)
        return dlb_errorf(err, DLB_ERR_INPUT, "none of the %u sampled training "
                          "images decodes (the first: %s); the folder cannot "
                          "be trained on", n, first.msg);
    double m = sum / count, v = sq / count - m * m;
    *mean = (float)m;
    *std = (float)(v > 1e-12 ? sqrt(v) : 1.0); /* a blank folder: no scaling */
    return DLB_OK;
}

/* The split must have one file that decodes; the first that does ends
 * the search (usually the first file). */
static dlb_status any_decodes(struct dlb_folder *f, const struct dlb_dataset *d,
                              struct dlb_error *err)
{
    size_t per = (size_t)d->c * d->h * d->w;
    float *px = malloc(per * sizeof *px);
    if (!px)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    dlb_status s = dlb_folder_fill(d, 0, 0, 0, px, NULL);
    free(px);
    if (s == DLB_ERR_INPUT)
        return dlb_errorf(err, s, "%s: none of the %u images of the %s split "
                          "decodes", d->source, d->n,
                          f->files == &f->scan.split[1] ? "training" : "test");
    return s == DLB_OK ? s : dlb_errorf(err, s, "out of memory");
}

static dlb_status describe(struct dlb_dataset *d, const char *root,
                           const struct dlb_folder *f, struct dlb_error *err)
{
    char buf[1200];
    snprintf(buf, sizeof buf, "image folder %s (%u classes%s) at %ux%ux%u",
             root, f->scan.n_classes,
             f->scan.held_out ? ", every sixth image held out for testing" : "",
             d->c, d->h, d->w);
    d->description = strdup(buf);
    d->source = strdup(root);
    if (!d->description || !d->source)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    return DLB_OK;
}

static dlb_status check_want(const char *root, const struct dlb_data_want *want,
                             struct dlb_error *err)
{
    if (!want || !want->c || !want->h || !want->w)
        return dlb_errorf(err, DLB_ERR_INPUT, "folder:%s: an image folder takes "
                          "the model's input shape, and none was given", root);
    if (want->c != 1 && want->c != 3)
        return dlb_errorf(err, DLB_ERR_INPUT, "folder:%s: the model takes %u "
                          "channels; images give 1 (grey) or 3 (RGB)", root,
                          want->c);
    return DLB_OK;
}

dlb_status dlb_folder_open(const char *root, int train,
                           const struct dlb_data_want *want,
                           struct dlb_dataset *out, struct dlb_error *err)
{
    memset(out, 0, sizeof *out);
    dlb_status s = check_want(root, want, err);
    if (s != DLB_OK)
        return s;
    struct dlb_folder *f = calloc(1, sizeof *f);
    if (!f)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    out->folder = f;
    s = dlb_folder_scan(root, DLB_FOLDER_MAX_CLASSES, &f->scan, err);
    if (s == DLB_ERR_IO) { /* the key at fault, beside the system's words */
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        dlb_errorf(err, s, "dataset = folder:%s: %s", root, msg);
    }
    if (s != DLB_OK) {
        dlb_dataset_free(out);
        return s;
    }
    f->files = &f->scan.split[train ? 1 : 0];
    if (f->scan.n_classes > want->classes)
        s = dlb_errorf(err, DLB_ERR_INPUT, "folder:%s: %u classes; the model "
                       "has %u: fix the folder or the model", root,
                       f->scan.n_classes, want->classes);
    else if (f->files->n == 0)
        s = dlb_errorf(err, DLB_ERR_INPUT, "folder:%s: no PNG or JPEG files "
                       "for the %s split%s", root, train ? "training" : "test",
                       f->scan.held_out && !train
                           ? " (every sixth file of a class is held out: give "
                             "each class six or more, or a test/ folder "
                             "beside train/)" : "");
    if (s == DLB_OK && !(f->bad = calloc(f->files->n, 1)))
        s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    if (s == DLB_OK) {
        out->n = f->files->n;
        out->c = want->c;
        out->h = want->h;
        out->w = want->w;
        out->classes = f->scan.n_classes;
        out->labels = malloc(out->n);
        if (!out->labels)
            s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
        else
            memcpy(out->labels, f->files->labels, out->n);
    }
    if (s == DLB_OK)
        s = describe(out, root, f, err);
    if (s == DLB_OK && f->scan.split[1].n == 0)
        s = dlb_errorf(err, DLB_ERR_INPUT, "folder:%s: no PNG or JPEG files "
                       "for the training split", root);
    if (s == DLB_OK)
        s = pixel_stats(f, &f->scan.split[1], want, train, &out->mean,
                        &out->std, err);
    if (s == DLB_OK)
        s = any_decodes(f, out, err);
    if (s != DLB_OK)
        dlb_dataset_free(out);
    return s;
}

uint32_t dlb_folder_corrupt(const struct dlb_folder *f)
{
    return f ? __atomic_load_n(&f->corrupt, __ATOMIC_RELAXED) : 0;
}

void dlb_folder_set_log(struct dlb_folder *f,
                        void (*log)(void *ctx, const char *line), void *ctx)
{
    f->log = log;
    f->log_ctx = ctx;
}

void dlb_folder_free(struct dlb_folder *f)
{
    if (!f)
        return;
    dlb_folder_scan_free(&f->scan);
    free(f->bad);
    free(f);
}
