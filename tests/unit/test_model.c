/* The reference CNN as a whole, on the ref backend:
 * - backward is the gradient of forward: every parametric layer of a tiny
 *   network (tests/unit/models/tiny.ini) is checked in fp64 against central
 *   differences of the loss, |analytic - numeric| <= 1e-5 * max(|a|, |n|)
 *   + 1e-8 (h = 1e-6: truncation ~1e-12, rounding ~1e-10);
 * - initialisation follows PyTorch's defaults (Kaiming-uniform bounds,
 *   batchnorm 1/0/0/1) and one seed gives bit-identical weights and losses;
 * - checkpoints round-trip exactly, and each kind of corrupt or foreign
 *   file is refused with a message naming the file and the tensor. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "model/model.h"
#include "ckpt/model_ckpt.h"
#include "ckpt/weights_cache.h"
#include "util/rng.h"
#include "model_fixture.h"

static struct dlb_backend *be;
static char tmpdir[256]; /* under the 512-byte paths made from it */

static struct dlb_model_spec *load_spec(const char *rel)
{
    return fx_load_spec(rel);
}

static struct dlb_model *make(const struct dlb_model_spec *s, enum dlb_dtype t,
                              uint64_t seed)
{
    return fx_make(s, be, t, seed);
}

#define random_batch fx_random_batch

static void test_gradients(void)
{
    enum { N = 4 };
    struct dlb_model_spec *s = load_spec("tests/unit/models/tiny.ini");
    if (!s)
        return;
    struct dlb_model *m = make(s, DLB_F64, 3);
    float img[N * 2 * 8 * 8];
    int32_t lab[N];
    random_batch(s, N, 11, img, lab);
    fx_check_gradients(be, m, img, lab, N, 4, 5);
    dlb_model_destroy(m);
    dlb_model_spec_free(s);
}

static void download(struct dlb_model *m, size_t t, float *out)
{
    const struct dlb_model_tensor *mt = dlb_model_tensor_at(m, t);
    CHECK(DLB_BE_CALL(be, copy_to_host, out, mt->buf, 0, mt->count * 4) == 0);
}

/* Uniform on [-b, b]: mean 0 (sd b/sqrt(3n)), variance b^2/3. */
static void check_uniform(const float *w, size_t n, double b, const char *name)
{
    double sum = 0, sq = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        sum += w[i];
        sq += (double)w[i] * w[i];
        mx = fmax(mx, fabs(w[i]));
    }
    double mean = sum / n, var = sq / n - mean * mean;
    CHECK(mx <= b);
    CHECK(mx > 0.9 * b || n < 50);
    CHECK(fabs(mean) <= 5 * b / sqrt(3.0 * n));
    if (n >= 200 && fabs(var / (b * b / 3) - 1) > 0.2)
        fprintf(stderr, "%s: variance %g, expected %g\n", name, var, b * b / 3);
    CHECK(n < 200 || fabs(var / (b * b / 3) - 1) <= 0.2);
}

static void test_init(void)
{
    struct dlb_model_spec *s = load_spec("suites/models/lenet.ini");
    struct dlb_model_spec *tiny = load_spec("tests/unit/models/tiny.ini");
    if (!s || !tiny)
        return;
    struct dlb_model *m = make(s, DLB_F32, 7);
    /* conv1 5x5x1, conv2 5x5x10, fc1 320, fc2 50 inputs. */
    const struct { const char *name; double fan_in; } want[] = {
        {"conv1.weight", 25}, {"conv1.bias", 25}, {"conv2.weight", 250},
        {"conv2.bias", 250}, {"fc1.weight", 320}, {"fc1.bias", 320},
        {"fc2.weight", 50}, {"fc2.bias", 50}};
    CHECK(dlb_model_n_tensors(m) == 8);
    for (size_t t = 0; t < 8 && t < dlb_model_n_tensors(m); t++) {
        const struct dlb_model_tensor *mt = dlb_model_tensor_at(m, t);
        float *w = malloc(mt->count * 4);
        CHECK(!strcmp(mt->name, want[t].name));
        download(m, t, w);
        check_uniform(w, mt->count, 1 / sqrt(want[t].fan_in), mt->name);
        free(w);
    }
    /* Batchnorm: gamma 1, beta 0, running mean 0, running variance 1. */
    struct dlb_model *b = make(tiny, DLB_F32, 7);
    const char *bn[] = {"bn1.weight", "bn1.bias", "bn1.running_mean",
                        "bn1.running_var"};
    const float expect[] = {1, 0, 0, 1};
    for (int k = 0; k < 4; k++) {
        struct dlb_buffer *v = NULL;
        float got[3];
        CHECK(dlb_model_find(b, bn[k], &v, NULL, NULL) == DLB_OK);
        CHECK(DLB_BE_CALL(be, copy_to_host, got, v, 0, sizeof got) == 0);
        CHECK(got[0] == expect[k] && got[1] == expect[k] && got[2] == expect[k]);
    }
    dlb_model_destroy(b);
    dlb_model_destroy(m);
    dlb_model_spec_free(s);
    dlb_model_spec_free(tiny);
}

/* Bytes of every checkpoint tensor, concatenated. */
static size_t snapshot(struct dlb_model *m, unsigned char *out)
{
    size_t off = 0;
    for (size_t t = 0; t < dlb_model_n_tensors(m); t++) {
        const struct dlb_model_tensor *mt = dlb_model_tensor_at(m, t);
        DLB_BE_CALL(be, copy_to_host, out + off, mt->buf, 0, mt->count * 4);
        off += mt->count * 4;
    }
    return off;
}

static void test_same_seed(void)
{
    enum { N = 8, STEPS = 4 };
    struct dlb_model_spec *s = load_spec("suites/models/lenet.ini");
    if (!s)
        return;
    struct dlb_model *a = make(s, DLB_F32, 42), *b = make(s, DLB_F32, 42);
    struct dlb_model *c = make(s, DLB_F32, 43);
    struct dlb_error err = {""};
    size_t bytes = (size_t)s->params * 4 + 64;
    unsigned char *wa = malloc(bytes), *wb = malloc(bytes), *wc = malloc(bytes);
    float *img = malloc(N * 784 * sizeof *img);
    int32_t lab[N];
    size_t na = snapshot(a, wa);
    CHECK(na == (size_t)s->params * 4);
    CHECK(snapshot(b, wb) == na && !memcmp(wa, wb, na));
    CHECK(snapshot(c, wc) == na && memcmp(wa, wc, na) != 0);
    /* Training with dropout: the same seeds give the same losses. */
    double la = 0, lb = 0;
    for (int k = 0; k < STEPS; k++) {
        random_batch(s, N, 100 + k, img, lab);
        CHECK(dlb_model_forward_backward(a, img, lab, N, 1, &la, &err) == 0);
        CHECK(dlb_model_sgd_step(a, &err) == 0);
        CHECK(dlb_model_forward_backward(b, img, lab, N, 1, &lb, &err) == 0);
        CHECK(dlb_model_sgd_step(b, &err) == 0);
        CHECK(la == lb && isfinite(la));
    }
    snapshot(a, wa);
    snapshot(b, wb);
    CHECK(!memcmp(wa, wb, na));
    /* Re-initialising restores the fresh weights. */
    CHECK(dlb_model_init(a, 43, &err) == DLB_OK);
    snapshot(a, wa);
    CHECK(!memcmp(wa, wc, na));
    free(wa);
    free(wb);
    free(wc);
    free(img);
    dlb_model_destroy(a);
    dlb_model_destroy(b);
    dlb_model_destroy(c);
    dlb_model_spec_free(s);
}

static void tmp_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", tmpdir, name);
}

static void test_roundtrip(void)
{
    enum { N = 4 };
    struct dlb_model_spec *s = load_spec("tests/unit/models/tiny.ini");
    if (!s)
        return;
    struct dlb_model *a = make(s, DLB_F32, 1), *b = make(s, DLB_F32, 2);
    struct dlb_error err = {""};
    struct dlb_st_file f;
    const struct dlb_st_kv meta[] = {{"seed", "1"}, {"note", "round trip"}};
    char path[512];
    float img[N * 128];
    int32_t lab[N];
    unsigned char wa[4096], wb[4096];
    tmp_path(path, sizeof path, "tiny.safetensors");
    random_batch(s, N, 9, img, lab);
    /* A step changes the running statistics too: they must round-trip. */
    CHECK(dlb_model_forward_backward(a, img, lab, N, 1, NULL, &err) == 0);
    CHECK(dlb_model_sgd_step(a, &err) == 0);
    CHECK(dlb_model_save(a, path, meta, 2, &err) == DLB_OK);
    CHECK(dlb_model_load(b, path, &f, &err) == DLB_OK);
    CHECK(snapshot(a, wa) == snapshot(b, wb));
    CHECK(!memcmp(wa, wb, snapshot(a, wa)));
    CHECK(dlb_st_meta(&f, "note") && !strcmp(dlb_st_meta(&f, "note"), "round trip"));
    CHECK(f.n == 10);
    dlb_st_free(&f);
    /* the metadata alone: the same values, no tensors read */
    CHECK(dlb_st_read_meta(path, &f, &err) == DLB_OK);
    CHECK(dlb_st_meta(&f, "note") && !strcmp(dlb_st_meta(&f, "note"), "round trip"));
    CHECK(f.n == 0 && f.n_meta == 2);
    dlb_st_free(&f);
    dlb_model_destroy(a);
    dlb_model_destroy(b);
    dlb_model_spec_free(s);
}

/* A file of an explicit header and `data_len` zero bytes of data. */
static void write_raw(const char *path, const char *header, uint64_t hlen,
                      size_t data_len)
{
    FILE *f = fopen(path, "wb");
    unsigned char le[8];
    for (int k = 0; k < 8; k++)
        le[k] = (unsigned char)(hlen >> (8 * k));
    CHECK(f != NULL);
    if (!f)
        return;
    fwrite(le, 1, 8, f);
    fwrite(header, 1, strlen(header), f);
    for (size_t i = 0; i < data_len; i++)
        fputc(0, f);
    fclose(f);
}

/* Format-level cases use one-tensor files and the reader alone; a model's
 * own checks (dtype, shape, missing or extra tensors) follow below. */
static void expect_read_error(const char *name, const char *header,
                              int64_t hlen, size_t data_len, const char *what)
{
    char path[512];
    struct dlb_st_file f;
    struct dlb_error err = {""};
    tmp_path(path, sizeof path, name);
    write_raw(path, header, hlen < 0 ? strlen(header) : (uint64_t)hlen, data_len);
    CHECK(dlb_st_read(path, &f, &err) == DLB_ERR_INPUT);
    if (!strstr(err.msg, what) || !strstr(err.msg, path))
        fprintf(stderr, "%s: got \"%s\", expected \"%s\"\n", name, err.msg, what);
    CHECK(strstr(err.msg, what) != NULL);
    CHECK(strstr(err.msg, path) != NULL);
}

static void test_corrupt_files(void)
{
    const char *ok = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
                     "\"data_offsets\":[0,8]}}";
    char path[512];
    struct dlb_st_file f;
    struct dlb_error err = {""};
    tmp_path(path, sizeof path, "ok.safetensors");
    write_raw(path, ok, strlen(ok), 8);
    CHECK(dlb_st_read(path, &f, &err) == DLB_OK);
    CHECK(f.n == 1 && f.tensors[0].bytes == 8);
    dlb_st_free(&f);

    tmp_path(path, sizeof path, "short.safetensors");
    FILE *fp = fopen(path, "wb");
    fputs("abc", fp);
    fclose(fp);
    CHECK(dlb_st_read(path, &f, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "too short") != NULL);

    expect_read_error("hlen.safetensors", ok, 1u << 20, 8, "header length");
    expect_read_error("hlen0.safetensors", ok, 0, 8, "header length");
    expect_read_error("truncated.safetensors", ok, -1, 5,
                      "tensor 'a': data_offsets [0, 8] is outside the 5 bytes");
    expect_read_error("json.safetensors", "{\"a\": {", -1, 0, "not valid JSON");
    expect_read_error("array.safetensors", "[1, 2]", -1, 0, "not a JSON object");
    expect_read_error("range.safetensors",
                      "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
                      "\"data_offsets\":[8,16]}}", -1, 8,
                      "tensor 'a': data_offsets [8, 16] is outside");
    expect_read_error("size.safetensors",
                      "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],"
                      "\"data_offsets\":[0,8]}}", -1, 8, "need 12");
    expect_read_error("dtype.safetensors",
                      "{\"a\":{\"dtype\":\"F33\",\"shape\":[2],"
                      "\"data_offsets\":[0,8]}}", -1, 8, "unknown or missing dtype F33");
    expect_read_error("overlap.safetensors",
                      "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                      "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                      -1, 12, "tensor 'b': data_offsets start at 4 where the "
                      "previous tensor ends at 8 (overlap)");
    expect_read_error("hole.safetensors",
                      "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                      "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[12,16]}}",
                      -1, 16, "(hole)");
    expect_read_error("trailing.safetensors", ok, -1, 12, "cover 8 of the 12");
    expect_read_error("dup.safetensors",
                      "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                      "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
                      -1, 8, "not valid JSON");
    expect_read_error("meta.safetensors",
                      "{\"__metadata__\":{\"k\":1},\"a\":{\"dtype\":\"F32\","
                      "\"shape\":[2],\"data_offsets\":[0,8]}}", -1, 8,
                      "__metadata__ value 'k' is not a string");
    expect_read_error("shape.safetensors",
                      "{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],"
                      "\"data_offsets\":[0,8]}}", -1, 8, "shape holds");
}

/* Write tiny's checkpoint with one tensor changed by `edit`. */
static void expect_load_error(struct dlb_model *m, const char *name,
                              void (*edit)(struct dlb_st_tensor *, size_t *),
                              const char *what)
{
    char path[512];
    struct dlb_error err = {""};
    size_t n = dlb_model_n_tensors(m);
    struct dlb_st_tensor t[16];
    static double zeros[1024]; /* >= the largest tensor of tiny */
    tmp_path(path, sizeof path, name);
    for (size_t i = 0; i < n; i++) {
        const struct dlb_model_tensor *mt = dlb_model_tensor_at(m, i);
        t[i] = (struct dlb_st_tensor){mt->name, DLB_F32, mt->ndim, {0}, zeros,
                                      mt->count * 4};
        memcpy(t[i].shape, mt->shape, sizeof mt->shape);
    }
    edit(t, &n);
    CHECK(dlb_st_write(path, t, n, NULL, 0, &err) == DLB_OK);
    unsigned char before[4096], after[4096];
    size_t bytes = snapshot(m, before);
    CHECK(dlb_model_load(m, path, NULL, &err) == DLB_ERR_INPUT);
    if (!strstr(err.msg, what))
        fprintf(stderr, "%s: got \"%s\", expected \"%s\"\n", name, err.msg, what);
    CHECK(strstr(err.msg, what) != NULL);
    CHECK(strstr(err.msg, path) != NULL);
    snapshot(m, after);
    CHECK(!memcmp(before, after, bytes)); /* a refused file changes nothing */
}

static void edit_dtype(struct dlb_st_tensor *t, size_t *n)
{
    (void)n;
    t[2].dtype = DLB_F64, t[2].bytes *= 2;
}
static void edit_shape(struct dlb_st_tensor *t, size_t *n)
{
    (void)n;
    t[6].shape[0] = 3, t[6].shape[1] = 16; /* fc1.weight: 6x48 as 3x16... */
    t[6].bytes = 3 * 16 * 4;
}
static void edit_missing(struct dlb_st_tensor *t, size_t *n)
{
    (void)t;
    (*n)--; /* fc2.bias */
}
static void edit_extra(struct dlb_st_tensor *t, size_t *n)
{
    t[*n] = t[0];
    t[(*n)++].name = "conv9.weight";
}

static void test_foreign_checkpoints(void)
{
    struct dlb_model_spec *s = load_spec("tests/unit/models/tiny.ini");
    if (!s)
        return;
    struct dlb_model *m = make(s, DLB_F32, 1);
    /* Tensors: conv1.weight, conv1.bias, bn1.weight, bn1.bias,
     * bn1.running_mean, bn1.running_var, fc1.weight, fc1.bias, fc2.weight,
     * fc2.bias. */
    CHECK(dlb_model_n_tensors(m) == 10);
    expect_load_error(m, "dtype.st", edit_dtype,
                      "tensor 'bn1.weight' has dtype F64; the model needs F32");
    expect_load_error(m, "shape.st", edit_shape,
                      "tensor 'fc1.weight' has shape [3, 16]; the model needs [6, 48]");
    expect_load_error(m, "missing.st", edit_missing,
                      "tensor 'fc2.bias' is missing");
    expect_load_error(m, "extra.st", edit_extra,
                      "tensor 'conv9.weight' is not part of model");
    char path[512];
    struct dlb_error err = {""};
    tmp_path(path, sizeof path, "absent.st");
    CHECK(dlb_model_load(m, path, NULL, &err) != DLB_OK);
    CHECK(strstr(err.msg, path) != NULL);
    dlb_model_destroy(m);
    dlb_model_spec_free(s);
}

static void test_cache_path(void)
{
    char dir[512], want[600], *p = NULL;
    struct dlb_error err = {""};
    tmp_path(dir, sizeof dir, "cache");
    setenv("DLBENCH_CACHE_DIR", dir, 1);
    CHECK(dlb_weights_cache_path("/x/y/vgg-small.ini", 42, 100, &p, &err) == 0);
    snprintf(want, sizeof want, "%s/weights/vgg-small-s42-n100.safetensors", dir);
    CHECK(p && !strcmp(p, want));
    snprintf(want, sizeof want, "%s/weights", dir);
    CHECK(access(want, W_OK) == 0);
    free(p);
    unsetenv("DLBENCH_CACHE_DIR");
    setenv("XDG_CACHE_HOME", dir, 1);
    CHECK(dlb_weights_cache_path("lenet", 1, 2, &p, &err) == 0);
    snprintf(want, sizeof want, "%s/dlbench/weights/lenet-s1-n2.safetensors", dir);
    CHECK(p && !strcmp(p, want));
    free(p);
}

int main(void)
{
    char why[256];
    struct dlb_backend_config cfg = {0};
    check_temp_template(tmpdir, sizeof tmpdir, "dlb_test_model.XXXXXX");
    if (!mkdtemp(tmpdir) ||
        dlb_backend_open("ref", &cfg, &be, why, sizeof why) != DLB_OK) {
        fprintf(stderr, "setup failed\n");
        return 1;
    }
    test_gradients();
    test_init();
    test_same_seed();
    test_roundtrip();
    test_corrupt_files();
    test_foreign_checkpoints();
    test_cache_path();
    dlb_backend_close(be);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_exit();
}
