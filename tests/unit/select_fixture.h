/* Crafted runs for the selection and search tests: a suite written to a
 * temporary file, its plan, and records with chosen figures. */
#ifndef DLB_TEST_SELECT_FIXTURE_H
#define DLB_TEST_SELECT_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "check.h"
#include "fake_plugins.h"
#include "plan/plan.h"
#include "stats/stats.h"
#include "suite/suite.h"

struct fixture {
    char path[512];
    struct dlb_suite s;
    struct dlb_plan p;
};

/* Load `text` as a suite and build its plan; 0 on failure (printed). */
static int fixture_open(struct fixture *f, const char *text)
{
    struct dlb_error err = {""};
    check_temp_template(f->path, sizeof f->path, "dlb-select-XXXXXX");
    int fd = mkstemp(f->path);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
        perror("fixture");
        return 0;
    }
    close(fd);
    if (dlb_suite_load(f->path, fake_lookup, NULL, &f->s, &err) != DLB_OK) {
        fprintf(stderr, "  %s\n", err.msg);
        unlink(f->path);
        return 0;
    }
    if (dlb_plan_build(&f->s, NULL, &f->p, &err) != DLB_OK) {
        fprintf(stderr, "  %s\n", err.msg);
        dlb_suite_free(&f->s);
        unlink(f->path);
        return 0;
    }
    return 1;
}

static void fixture_close(struct fixture *f)
{
    dlb_plan_free(&f->p);
    dlb_suite_free(&f->s);
    unlink(f->path);
}

/* An ok record of plan position `pos`: n (<= 64) step times around
 * 1/throughput (one sample per step) spread by +-spread (fraction), an
 * accuracy (< 0: none) and a peak RSS in bytes (< 0: none). */
static json_t *crafted_n(const struct fixture *f, size_t pos, int n,
                         double throughput, double spread, double accuracy,
                         double peak)
{
    const int N = n < 64 ? n : 64;
    double t[64];
    json_t *samples = json_array();
    for (int k = 0; k < N; k++) {
        t[k] = 1.0 / throughput * (1 + spread * ((double)(k % 7) - 3) / 3);
        json_array_append_new(samples, json_real(t[k]));
    }
    struct dlb_stats st;
    dlb_stats_compute(t, N, &st);
    json_t *metrics = json_object();
    if (accuracy >= 0)
        json_object_set_new(metrics, "accuracy",
                            json_pack("{s:f,s:s}", "value", accuracy, "unit", "%"));
    if (peak >= 0)
        json_object_set_new(metrics, "peak_rss",
                            json_pack("{s:f,s:s}", "value", peak, "unit", "bytes"));
    const struct dlb_config *c = &f->p.configs[pos];
    return json_pack("{s:I,s:s,s:s,s:{s:I,s:f,s:f,s:f},s:{s:f,s:f,s:f},s:o,"
                     "s:{s:f},s:o}",
                     "index", (json_int_t)c->index, "id", c->id, "status", "ok",
                     "stats", "n", (json_int_t)N, "median", st.median, "ci_lo",
                     st.ci_lo, "ci_hi", st.ci_hi,
                     "throughput", "median", 1 / st.median, "ci_lo", 1 / st.ci_hi,
                     "ci_hi", 1 / st.ci_lo, "samples", samples,
                     "measure", "samples_per_step", 1.0, "metrics", metrics);
}

/* The same with 21 samples. */
static json_t *crafted(const struct fixture *f, size_t pos, double throughput,
                       double spread, double accuracy, double peak)
{
    return crafted_n(f, pos, 21, throughput, spread, accuracy, peak);
}

#endif
