/* ONNX import (core/model/onnx_*.c): the small models that
 * tests/data/onnx/make-onnx.py writes give, on ref and cpu, the outputs
 * numpy computed for them in float64: |dlbench - numpy| <= 1e-4 *
 * max(1, |numpy|) for each log-probability (fp32 sums of at most a few
 * hundred products stay within ~1e-6 of fp64; the bound leaves room for
 * oneDNN's summation order). An imported model trains (its loss falls on
 * a fixed batch), external data beside the file is read, and every bad
 * model is refused with a message that names the node, its operator and
 * what is wrong. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "model/model.h"
#include "model/model_find.h"
#include "model/model_weights.h"
#include "model/onnx_map.h"

#define TOL 1e-4

static char dir[1024];

struct values {
    unsigned dims[4], ndim;
    size_t n;
    float *v;
};

static int read_values(const char *name, struct values *out)
{
    char path[1200], line[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    memset(out, 0, sizeof *out);
    if (!f || !fgets(line, sizeof line, f)) {
        fprintf(stderr, "%s: cannot read\n", path);
        if (f)
            fclose(f);
        return 0;
    }
    out->n = 1;
    for (char *p = strtok(line, " \n"); p && out->ndim < 4; p = strtok(NULL, " \n")) {
        out->dims[out->ndim++] = (unsigned)atoi(p);
        out->n *= out->dims[out->ndim - 1];
    }
    out->v = malloc(out->n * sizeof *out->v);
    size_t i = 0;
    while (out->v && i < out->n && fscanf(f, "%f", &out->v[i]) == 1)
        i++;
    fclose(f);
    return out->v && i == out->n;
}

static struct dlb_model_spec *load(const char *name, struct dlb_error *err)
{
    char path[1200];
    struct dlb_model_spec *s = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (dlb_model_file_load(path, &s, err) != DLB_OK)
        return NULL;
    return s;
}

/* The model's log-probabilities on `stem`.in.txt against `stem`.out.txt,
 * on backend `be_name`; 0 when the backend is not built. */
static int compare(const char *model, const char *stem, const char *be_name,
                   uint64_t seed)
{
    struct dlb_error err = { "" };
    struct dlb_backend *be = NULL;
    struct dlb_model *m = NULL;
    struct values in, want;
    char why[256], f_in[256], f_out[256];
    if (dlb_backend_open(be_name, NULL, &be, why, sizeof why) != DLB_OK) {
        fprintf(stderr, "%s: backend %s not here (%s)\n", model, be_name, why);
        return 0;
    }
    snprintf(f_in, sizeof f_in, "%s.in.txt", stem);
    snprintf(f_out, sizeof f_out, "%s.out.txt", stem);
    struct dlb_model_spec *s = load(model, &err);
    if (!s)
        fprintf(stderr, "%s\n", err.msg);
    CHECK(s != NULL);
    CHECK(read_values(f_in, &in) && read_values(f_out, &want));
    if (s && in.v && want.v) {
        CHECK(s->weights != NULL);
        CHECK(in.dims[1] == s->in_c && in.dims[2] == s->in_h &&
              in.dims[3] == s->in_w && want.dims[1] == s->classes);
        CHECK(s->loss == DLB_LOSS_CROSS_ENTROPY);
        if (dlb_model_create(s, be, DLB_F32, seed, &m, &err) != DLB_OK)
            fprintf(stderr, "%s\n", err.msg);
        CHECK(m != NULL);
    }
    if (m) {
        float *got = calloc(want.n, sizeof *got);
        CHECK(dlb_model_infer(m, in.v, in.dims[0], got, &err) == DLB_OK);
        for (size_t i = 0; i < want.n; i++)
            CHECK_NEAR(got[i], want.v[i], TOL);
        free(got);
    }
    dlb_model_destroy(m);
    dlb_model_spec_free(s);
    dlb_backend_close(be);
    free(in.v);
    free(want.v);
    return 1;
}

/* Cross-entropy training from the file's weights: SGD on one batch lowers
 * its loss. */
static void trains(const char *model, const char *inputs)
{
    struct dlb_error err = { "" };
    struct dlb_backend *be = NULL;
    struct dlb_model *m = NULL;
    struct values in;
    char why[256];
    struct dlb_model_spec *s = load(model, &err);
    CHECK(s != NULL);
    CHECK(read_values(inputs, &in));
    CHECK(dlb_backend_open("ref", NULL, &be, why, sizeof why) == DLB_OK);
    if (!s || !in.v || !be ||
        dlb_model_create(s, be, DLB_F32, 1, &m, &err) != DLB_OK) {
        fprintf(stderr, "%s\n", err.msg);
        CHECK(0);
    } else {
        int32_t lab[2] = { 3, 1 };
        double first = 0, loss = 0;
        for (int step = 0; step < 8; step++) {
            if (dlb_model_forward_backward(m, in.v, lab, 2, 1.0f, &loss,
                                           &err) != DLB_OK) {
                fprintf(stderr, "%s\n", err.msg);
                CHECK(0);
                break;
            }
            CHECK(dlb_model_sgd_step(m, &err) == DLB_OK);
            if (step == 0)
                first = loss;
        }
        fprintf(stderr, "%s: loss %g -> %g\n", model, first, loss);
        CHECK(isfinite(loss) && loss < first);
    }
    dlb_model_destroy(m);
    dlb_model_spec_free(s);
    dlb_backend_close(be);
    free(in.v);
}

/* A refused model: status `st`, every fragment in the message. */
static void refused(const char *model, const char *const *frag)
{
    struct dlb_error err = { "" };
    struct dlb_model_spec *s = load(model, &err);
    CHECK(s == NULL);
    fprintf(stderr, "%s -> %s\n", model, err.msg);
    CHECK(strncmp(err.msg, dir, strlen(dir)) == 0); /* names the file */
    for (; *frag; frag++) {
        int found = strstr(err.msg, *frag) != NULL;
        if (!found)
            fprintf(stderr, "  missing: %s\n", *frag);
        CHECK(found);
    }
    dlb_model_spec_free(s);
}

static void errors(void)
{
    static const char *const op[] = { "node 'Leaky_3' (LeakyRelu)",
        "operator LeakyRelu is not supported", "supported ops: Conv", NULL };
    static const char *const at[] = { "node 'Conv_12' (Conv): attribute "
        "dilations = [2,2] is not supported (dlbench supports dilations 1)",
        "supported ops: ", NULL };
    static const char *const sh[] = { "node 'Add_7' (Add)",
        "the shapes do not infer", "4x26x26", "8x26x26", NULL };
    static const char *const tr[] = { "truncated.onnx: not an ONNX model",
        "truncated", NULL };
    static const char *const ext[] = { "initializer 'conv1.w'",
        "'../outside.bin' is refused", "inside the model's folder", NULL };
    refused("bad_op.onnx", op);
    refused("bad_attr.onnx", at);
    refused("bad_shape.onnx", sh);
    refused("truncated.onnx", tr);
    refused("bad_extpath.onnx", ext);
    /* a constant where data must be: it has no layer to take a shape
     * from (a fuzzed file read layer 0 of none) */
    static const char *const cin[] = { "node 'Conv_2' (Conv)",
        "input 1 'k' is an initializer or a Constant",
        "data computed from the graph's input", NULL };
    refused("bad_const_input.onnx", cin);

    /* Not ONNX at all; external data from memory, with no folder. */
    struct dlb_error err = { "" };
    struct dlb_model_spec *s = NULL;
    static const char ini[] = "[net]\ninput = 1x28x28\nclasses = 10\n";
    CHECK(dlb_onnx_parse("x.onnx", (const uint8_t *)ini, sizeof ini - 1, NULL,
                         &s, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "x.onnx: not an ONNX model") != NULL);
    char path[1200];
    snprintf(path, sizeof path, "%s/ext_data.onnx", dir);
    FILE *f = fopen(path, "rb");
    static uint8_t buf[1 << 16];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    CHECK(n > 0 && n < sizeof buf);
    CHECK(dlb_onnx_parse("mem.onnx", buf, n, NULL, &s, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "node 'conv1' (Conv)") != NULL &&
          strstr(err.msg, "external file") != NULL);
    fprintf(stderr, "in memory -> %s\n", err.msg);
}

/* A model's layers: the graph as dlbench sees it. */
static void structure(void)
{
    struct dlb_error err = { "" };
    struct dlb_model_spec *s = load("tiny_res.onnx", &err);
    CHECK(s != NULL);
    if (!s)
        return;
    static const enum dlb_layer_kind kinds[] = { DLB_LAYER_CONV,
        DLB_LAYER_BATCHNORM, DLB_LAYER_RELU, DLB_LAYER_CONV,
        DLB_LAYER_BATCHNORM, DLB_LAYER_ADD, DLB_LAYER_RELU, DLB_LAYER_MAXPOOL,
        DLB_LAYER_GLOBAL_AVGPOOL, DLB_LAYER_FLATTEN, DLB_LAYER_LINEAR,
        DLB_LAYER_LOGSOFTMAX };
    CHECK(s->n_layers == sizeof kinds / sizeof kinds[0]);
    for (size_t i = 0; i < s->n_layers && i < sizeof kinds / sizeof kinds[0]; i++)
        CHECK(s->layers[i].kind == kinds[i]);
    CHECK(!strcmp(s->layers[0].name, "conv1"));
    CHECK(s->layers[5].n_inputs == 2 && s->layers[5].inputs[0] == 4 &&
          s->layers[5].inputs[1] == 2);
    CHECK(s->in_c == 1 && s->in_h == 28 && s->in_w == 28 && s->classes == 10);
    /* PyTorch's momentum is 1 - ONNX's. */
    CHECK_NEAR(s->layers[1].momentum, 0.1, 1e-6);
    CHECK(dlb_model_weights_find(s->weights, "bn1.running_var") != NULL);
    CHECK(dlb_model_weights_find(s->weights, "fc.weight")->shape[0] == 10);
    dlb_model_spec_free(s);

    /* A suite's `model = x.onnx` is a path as x.ini is, and a bare NAME
     * finds models/NAME.onnx. */
    char *p = dlb_model_file_find("tiny_res.onnx", NULL, 0, NULL, &err);
    CHECK(p == NULL && strstr(err.msg, "model file tiny_res.onnx cannot be "
                              "read") != NULL);
    free(p);
    char suite[1200];
    snprintf(suite, sizeof suite, "%s/../x.ini", dir); /* tests/data/x.ini */
    const char *sp = suite;
    p = dlb_model_file_find("onnx", &sp, 1, NULL, &err); /* data/models/? */
    CHECK(p == NULL && strstr(err.msg, "models/onnx.onnx") != NULL);
    free(p);
}

int main(void)
{
    const char *srcdir = getenv("srcdir");
    snprintf(dir, sizeof dir, "%s/tests/data/onnx",
             srcdir && *srcdir ? srcdir : ".");
    structure();
    static const char *const backends[] = { "ref", "cpu" };
    for (int b = 0; b < 2; b++) {
        /* The seed does not matter: the weights come from the file. */
        compare("tiny_res.onnx", "tiny_res", backends[b], 1);
        compare("tiny_res.onnx", "tiny_res", backends[b], 99);
        compare("tiny_dw.onnx", "tiny_dw", backends[b], 1);
        compare("ext_data.onnx", "tiny_res", backends[b], 1);
    }
    trains("tiny_res.onnx", "tiny_res.in.txt");
    trains("tiny_dw.onnx", "tiny_dw.in.txt");
    errors();
    return check_exit();
}
