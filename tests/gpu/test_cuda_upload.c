/* Pinned batches uploaded on the copy stream (backend API 1.4,
 * dataloader.pinned) deliver exactly the pageable path's batches:
 *  - the batches the model sees on the device over three epochs have the
 *    baseline loader's checksums, batch by batch;
 *  - LeNet trained on them follows the pageable run's loss trajectory
 *    within 1e-5 relative, eagerly and from a graph (see below);
 *  - the figures exist: bytes, copy time, and the share of the copy the
 *    step hid (printed; on an idle GPU most of it).
 * The pinned batch source here wraps the baseline loader and copies each
 * batch into page-locked memory the host lends (as the dataloader plugin
 * does with pinned = on). Exits 77 without a GPU. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "data/dataset.h"
#include "gpu_open.h"
#include "child/host.h"
#include "data/batch_prefetch.h"
#include "train/model_graph.h"
#include "train/trainer.h"

#define BATCH 256u
#define STEPS 30

/* ---- a pinned batch source over the baseline loader ------------------ */
struct pin_src {
    const struct dlb_host *h;
    struct dlb_batches *inner;
    float *images;
    int32_t *labels;
    size_t img_bytes, lab_bytes;
};

static dlb_status pin_open(void *state, const struct dlb_host *h,
                           const struct dlb_dataset *d,
                           const struct dlb_batch_spec *spec, void **out)
{
    struct dlb_error err = {""};
    struct pin_src *s = calloc(1, sizeof *s);
    (void)state;
    if (!s)
        return DLB_ERR_NOMEM;
    s->h = h;
    s->img_bytes = (size_t)spec->batch * d->c * d->h * d->w * sizeof(float);
    s->lab_bytes = (size_t)spec->batch * sizeof(int32_t);
    s->images = h->pinned_alloc(h, s->img_bytes);
    s->labels = h->pinned_alloc(h, s->lab_bytes);
    if (!s->images || !s->labels ||
        dlb_batches_open(d, spec, NULL, &s->inner, &err) != DLB_OK) {
        fprintf(stderr, "pinned source: %s\n", err.msg[0] ? err.msg :
                "no page-locked memory");
        h->pinned_free(h, s->images, s->img_bytes);
        h->pinned_free(h, s->labels, s->lab_bytes);
        free(s);
        return DLB_ERR_NOMEM;
    }
    *out = s;
    return DLB_OK;
}

static dlb_status pin_next(void *src, struct dlb_batch *out)
{
    struct pin_src *s = src;
    struct dlb_error err = {""};
    struct dlb_batch b;
    dlb_status st = dlb_batches_next(s->inner, &b, &err);
    if (st != DLB_OK)
        return st;
    memcpy(s->images, b.images, (size_t)b.n * b.c * b.h * b.w * sizeof(float));
    memcpy(s->labels, b.labels, (size_t)b.n * sizeof(int32_t));
    *out = b;
    out->images = s->images;
    out->labels = s->labels;
    return DLB_OK;
}

static void pin_close(void *src)
{
    struct pin_src *s = src;
    dlb_batches_close(s->inner);
    s->h->pinned_free(s->h, s->images, s->img_bytes);
    s->h->pinned_free(s->h, s->labels, s->lab_bytes);
    free(s);
}

static const struct dlb_batch_source_hooks pin_hooks = {pin_open, pin_next,
                                                        pin_close};

static uint64_t fnv(uint64_t x, const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++)
        x = (x ^ b[i]) * 0x100000001b3ull;
    return x;
}

static uint64_t sum_of(const float *images, const int32_t *labels, uint32_t n,
                       size_t per)
{
    uint64_t x = fnv(0xcbf29ce484222325ull, &n, sizeof n);
    x = fnv(x, images, (size_t)n * per * sizeof *images);
    return fnv(x, labels, (size_t)n * sizeof *labels);
}

/* Three epochs of batches as the model would see them on the device. */
static int same_batches(struct dlb_backend *be, const struct dlb_dataset *tr,
                        const struct dlb_batch_plugin *pin)
{
    const struct dlb_backend_ops *o = dlb_backend_ops_of(be);
    struct dlb_batch_spec bs = {BATCH, 1, 1, 1, 42};
    struct dlb_batches *ref = NULL, *dev = NULL;
    struct dlb_error err = {""};
    size_t per = (size_t)tr->c * tr->h * tr->w;
    uint64_t steps = 3 * (uint64_t)(tr->n / BATCH), same = 0, k;
    float *img = malloc((size_t)BATCH * per * sizeof *img);
    int32_t *lab = malloc(BATCH * sizeof *lab);
    dlb_status s = img && lab ? DLB_OK : DLB_ERR_NOMEM;
    if (s == DLB_OK && (s = dlb_batches_open(tr, &bs, NULL, &ref, &err)) == DLB_OK)
        s = dlb_batches_open(tr, &bs, pin, &dev, &err);
    for (k = 0; k < steps && s == DLB_OK; k++) {
        struct dlb_batch hb, rb;
        struct dlb_dev_batch db;
        int on_device = 0;
        if ((s = dlb_batches_take(dev, be, 1, &hb, &db, &on_device, &err)) ||
            (s = dlb_batches_next(ref, &rb, &err)))
            break;
        if (!on_device) {
            fprintf(stderr, "batch %llu came on the host\n",
                    (unsigned long long)k);
            break;
        }
        if ((s = o->copy_to_host(be, img, db.images, 0,
                                 (size_t)db.n * per * sizeof *img)) ||
            (s = o->copy_to_host(be, lab, db.labels, 0,
                                 (size_t)db.n * sizeof *lab))) {
            dlb_errorf(&err, s, "%s", dlb_backend_last_error(be));
            break;
        }
        same += db.n == rb.n && sum_of(img, lab, db.n, per) ==
                                    sum_of(rb.images, rb.labels, rb.n, per);
    }
    if (s != DLB_OK)
        fprintf(stderr, "batches: %s\n", err.msg);
    fprintf(stderr, "device batches equal to the baseline's: %llu of %llu "
            "(three epochs)\n", (unsigned long long)same,
            (unsigned long long)steps);
    dlb_batches_close(dev);
    dlb_batches_close(ref);
    free(img);
    free(lab);
    return s == DLB_OK && same == steps;
}

static int train(struct dlb_backend *be, const struct dlb_model_spec *spec,
                 const struct dlb_dataset *tr,
                 const struct dlb_batch_plugin *pin, int graphs,
                 double *loss, struct dlb_prefetch_figures *fig)
{
    struct dlb_model *m = NULL;
    struct dlb_error err = {""};
    struct dlb_batch_spec bs = {BATCH, 1, 1, 1, 42};
    dlb_status s = dlb_model_create(spec, be, DLB_F32, 42, &m, &err);
    if (s != DLB_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 0;
    }
    dlb_model_set_sgd(m, 0.01f, 0.9f);
    struct dlb_trainer t = {.model = m, .graphs = graphs};
    if ((s = dlb_model_init(m, 42, &err)) == DLB_OK)
        s = dlb_batches_open(tr, &bs, pin, &t.batches, &err);
    for (int i = 0; i < STEPS && s == DLB_OK; i++) {
        s = dlb_trainer_step(&t, 1, &err), loss[i] = t.last_loss;
        /* As a measured step: the host waits for the stream at its end. */
        if (s == DLB_OK && (s = DLB_BE_CALL0(be, synchronize)) != DLB_OK)
            dlb_errorf(&err, s, "%s", dlb_backend_last_error(be));
    }
    dlb_batches_upload_figures(t.batches, fig);
    if (s != DLB_OK)
        fprintf(stderr, "%s graphs %s: %s\n", pin ? "pinned" : "pageable",
                graphs ? "on" : "off", err.msg);
    dlb_trainer_close_graph(&t);
    dlb_batches_close(t.batches);
    dlb_model_destroy(m);
    return s == DLB_OK;
}

int main(void)
{
    struct dlb_backend_config cfg = {.seed = 42};
    struct dlb_dataset tr;
    struct dlb_model_spec *spec = NULL;
    struct dlb_error err = {""};
    struct dlb_host_shared shared = {0};
    struct dlb_host_priv hp;
    const char *srcdir = getenv("srcdir");
    char path[1024];
    int synth = 0;
    struct dlb_backend *gpu = gpu_open_or_skip(&cfg);
    snprintf(path, sizeof path, "%s/suites/models/lenet.ini",
             srcdir && *srcdir ? srcdir : ".");
    if (dlb_dataset_open("auto", NULL, 1, 42, &tr, &synth, &err) ||
        dlb_model_file_load(path, &spec, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    dlb_host_setup(&hp, &shared, "pinned-source", 42, 0);
    hp.pub.backend_name = "cuda";
    dlb_host_set_backend(&hp.pub, gpu);
    CHECK(hp.pub.pinned_supported(&hp.pub, path, sizeof path) == DLB_OK);
    struct dlb_batch_plugin pin = {&pin_hooks, NULL, &hp.pub, dlb_host_pinned_holds};

    CHECK(same_batches(gpu, &tr, &pin));

    for (int graphs = 0; graphs < 2; graphs++) {
        double pageable[STEPS], pinned[STEPS];
        struct dlb_prefetch_figures fp, fq;
        CHECK(train(gpu, spec, &tr, NULL, graphs, pageable, &fp));
        CHECK(train(gpu, spec, &tr, &pin, graphs, pinned, &fq));
        CHECK(fp.batches == 0);              /* pageable: inside the step */
        CHECK(fq.batches == STEPS + 1);      /* one ahead of the last step */
        CHECK(fq.measured >= STEPS - 2 && fq.copy_s > 0);
        CHECK(fq.exposed_s >= 0 && fq.exposed_s <= fq.copy_s);
        int same = 0, first = -1;
        double worst = 0.0;
        for (int i = 0; i < STEPS; i++) {
            same += pageable[i] == pinned[i];
            if (first < 0 && pageable[i] != pinned[i])
                first = i;
            worst = fmax(worst, fabs(pinned[i] - pageable[i]) /
                                    fmax(1e-30, fabs(pageable[i])));
        }
        /* The same data, seeds and kernels, but not always the same
         * order of the sums: cuDNN's heuristic may pick algorithms that
         * accumulate with atomics, whose order the copy stream's timing
         * can change. On the H200 the losses differed in the last bit
         * (1.1e-7 relative) from step 1 or 18 on, or not at all: f32
         * rounding, far inside 1e-5, while a wrong or torn batch moves
         * the loss by 1e-2 or more. */
        CHECK(worst <= 1e-5);
        fprintf(stderr, "graphs %s: pinned vs pageable losses identical over "
                "%d steps: %s (first difference at step %d, largest %.2e "
                "relative; last %.6f); %.0f bytes uploaded, copy %.1f us "
                "per batch, overlap share %.1f%%\n", graphs ? "on" : "off",
                STEPS, same == STEPS ? "yes" : "no", first, worst,
                pinned[STEPS - 1],
                fq.bytes, 1e6 * fq.copy_s / (double)fq.measured,
                fq.copy_s > 0 ? 100.0 * (1.0 - fq.exposed_s / fq.copy_s)
                              : 0.0);
    }
    CHECK(shared.n_pinned == 0); /* every block given back */
    dlb_host_set_backend(&hp.pub, NULL);
    dlb_model_spec_free(spec);
    dlb_dataset_free(&tr);
    dlb_backend_close(gpu);
    return check_exit();
}
