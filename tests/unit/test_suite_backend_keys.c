/* The backends' suite keys (cudnn.algo, cuda.tf32, cuda.graphs;
 * cpu.winograd):
 * they are sweep axes and core keys of every record; a suite that can
 * only run another backend and sets one away from its default is refused
 * at load with FILE:LINE (dlbench exits 2); a suite that sweeps the
 * backend keeps them (its cpu configurations are skipped at run time);
 * a value outside the choices is refused at its line. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "suite/suite.h"

static dlb_status no_plugins(void *ctx, const char *name,
                             const struct dlb_plugin **out,
                             struct dlb_error *err)
{
    (void)ctx;
    *out = NULL;
    return dlb_errorf(err, DLB_ERR_INPUT, "unknown plugin '%s'", name);
}

/* Load `text` as a suite file; the status, the error in err. */
static dlb_status load(const char *text, struct dlb_suite *s,
                       struct dlb_error *err, char *path, size_t len)
{
    check_temp_template(path, len, "dlb-backend-keys-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0)
        return DLB_ERR_IO;
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    err->msg[0] = '\0';
    dlb_status st = dlb_suite_load(path, no_plugins, NULL, s, err);
    unlink(path);
    return st;
}

/* The error names the file and line, and says `needle`. */
static int error_at(const char *text, int line, const char *needle)
{
    struct dlb_suite s;
    struct dlb_error err = {""};
    char path[512], at[600];
    dlb_status st = load(text, &s, &err, path, sizeof path);
    if (st == DLB_OK) {
        dlb_suite_free(&s);
        fprintf(stderr, "  accepted:\n%s\n", text);
        return 0;
    }
    snprintf(at, sizeof at, "%s:%d:", path, line);
    fprintf(stderr, "  (expected) %s\n", err.msg);
    return st == DLB_ERR_INPUT && strstr(err.msg, at) &&
           strstr(err.msg, needle);
}

static int accepted(const char *text, size_t axes)
{
    struct dlb_suite s;
    struct dlb_error err = {""};
    char path[512];
    if (load(text, &s, &err, path, sizeof path) != DLB_OK) {
        fprintf(stderr, "  refused: %s\n", err.msg);
        return 0;
    }
    int ok = s.n_axes == axes;
    dlb_suite_free(&s);
    return ok;
}

int main(void)
{
    /* Fixed to cpu: refused at the key's line, saying why. */
    CHECK(error_at("[suite]\nbackend = cpu\ncuda.graphs = on\n", 3,
                   "cuda.graphs = on applies to backend = cuda only"));
    /* The default backend (cpu) with an axis. */
    CHECK(error_at("[suite]\nmodel = lenet\n[sweep]\ncuda.tf32 = off, on\n", 4,
                   "backend = cpu (the default)"));
    CHECK(error_at("[suite]\nbackend = ref\n[sweep]\ncudnn.algo = search\n", 4,
                   "cudnn.algo = search"));
    /* Unknown values: the line, and the choices. */
    CHECK(error_at("[suite]\nbackend = cuda\ncuda.graphs = maybe\n", 3,
                   "cuda.graphs"));
    CHECK(error_at("[suite]\nbackend = cuda\n[sweep]\ncudnn.algo = heuristic, "
                   "fastest\n", 4, "cudnn.algo"));
    /* A misspelt key gets a suggestion. */
    CHECK(error_at("[suite]\nbackend = cuda\ncuda.graph = on\n", 3,
                   "cuda.graphs"));
    /* cuda: keys and axes. */
    CHECK(accepted("[suite]\nbackend = cuda\ncuda.graphs = on\ncuda.tf32 = on\n",
                   0));
    CHECK(accepted("[suite]\nbackend = cuda\n[sweep]\ncuda.graphs = off, on\n"
                   "cudnn.algo = heuristic, search\n", 2));
    /* Defaults on cpu say nothing that could not hold. */
    CHECK(accepted("[suite]\nbackend = cpu\ncuda.graphs = off\n"
                   "cudnn.algo = heuristic\n", 0));
    /* A swept backend keeps them; filters may name them. */
    CHECK(accepted("[sweep]\nbackend = cpu, cuda\ncuda.graphs = off, on\n"
                   "skip = backend=cpu cuda.graphs=on\n", 2));
    /* The cpu backend's cpu.winograd: off refused on another backend, at
     * its line; on (the default) says nothing; cpu takes either. */
    CHECK(error_at("[suite]\nbackend = ref\ncpu.winograd = off\n", 3,
                   "cpu.winograd = off applies to backend = cpu only"));
    CHECK(accepted("[suite]\nbackend = ref\ncpu.winograd = on\n", 0));
    CHECK(accepted("[suite]\nbackend = cpu\n[sweep]\ncpu.winograd = on, off\n",
                   1));
    CHECK(error_at("[suite]\nbackend = cpu\ncpu.winograd = maybe\n", 3,
                   "cpu.winograd"));
    /* [quick] may switch to cuda. */
    CHECK(accepted("[suite]\nbackend = cpu\ncuda.graphs = on\n[quick]\n"
                   "backend = cuda\n", 0));
    return check_exit();
}
