/* Inference of a model file on fixed inputs, for side-by-side checks
 * against other frameworks (tests/bench/onnx-vs-torch.sh):
 *
 *   onnx_infer MODEL BACKEND INPUT OUTPUT
 *
 * INPUT holds N images of the model's C x H x W as raw little-endian
 * float32 (N follows from its size); OUTPUT receives N x classes float32
 * log-probabilities, the model's inference output (an ONNX model's
 * logits through the log-softmax its loss adds). Exit status 0, 1 when
 * the model cannot run, 2 on bad arguments or files. Built by
 * `make bench`. */
#include <stdio.h>
#include <stdlib.h>

#include "backend/backend.h"
#include "model/model.h"

static float *read_all(const char *path, size_t *bytes)
{
    FILE *f = fopen(path, "rb");
    float *buf = NULL;
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n)) &&
        fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (f)
        fclose(f);
    *bytes = n > 0 ? (size_t)n : 0;
    return buf;
}

int main(int argc, char **argv)
{
    struct dlb_error err = { "" };
    struct dlb_model_spec *spec = NULL;
    struct dlb_backend *be = NULL;
    struct dlb_model *m = NULL;
    char why[512];
    size_t bytes;
    if (argc != 5) {
        fprintf(stderr, "usage: %s MODEL BACKEND INPUT.f32 OUTPUT.f32\n",
                argv[0]);
        return 2;
    }
    if (dlb_model_file_load(argv[1], &spec, &err) != DLB_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    size_t per = (size_t)spec->in_c * spec->in_h * spec->in_w;
    float *in = read_all(argv[3], &bytes);
    if (!in || bytes % (per * sizeof *in)) {
        fprintf(stderr, "%s: expected N x %ux%ux%u float32 values (a multiple "
                "of %zu bytes), got %zu bytes\n", argv[3], spec->in_c,
                spec->in_h, spec->in_w, per * sizeof *in, bytes);
        return 2;
    }
    uint32_t n = (uint32_t)(bytes / (per * sizeof *in));
    float *out = malloc((size_t)n * spec->classes * sizeof *out);
    int rc = 1;
    if (dlb_backend_open(argv[2], NULL, &be, why, sizeof why) != DLB_OK)
        fprintf(stderr, "backend %s: %s\n", argv[2], why);
    else if (dlb_model_create(spec, be, DLB_F32, 0, &m, &err) != DLB_OK ||
             dlb_model_infer(m, in, n, out, &err) != DLB_OK)
        fprintf(stderr, "%s\n", err.msg);
    else {
        FILE *f = fopen(argv[4], "wb");
        size_t count = (size_t)n * spec->classes;
        rc = f && fwrite(out, sizeof *out, count, f) == count ? 0 : 2;
        if (f && fclose(f) != 0)
            rc = 2;
        if (rc)
            fprintf(stderr, "%s: cannot write\n", argv[4]);
    }
    dlb_model_destroy(m);
    dlb_backend_close(be);
    dlb_model_spec_free(spec);
    free(in);
    free(out);
    return rc;
}
