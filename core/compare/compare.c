/* dlb_compare: match the configurations of two runs by id and judge each. */
#include "compare/compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "results/comparison.h"
#include "results/results.h"
#include "stats/stats.h"

dlb_status dlb_compare_load(const char *path, json_t **doc, char **file,
                            struct dlb_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s (give a run directory or "
                          "its results.json)", path, strerror(errno));
    size_t n = strlen(path) + sizeof "/results.json";
    char *f = malloc(n);
    if (!f)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    if (S_ISDIR(st.st_mode))
        snprintf(f, n, "%s/results.json", path);
    else
        snprintf(f, n, "%s", path);
    if (S_ISDIR(st.st_mode) && stat(f, &st) != 0) {
        dlb_status s = dlb_errorf(err, DLB_ERR_INPUT, "%s has no results.json; if "
                                  "the run was interrupted, finish it with "
                                  "dlbench --resume %s", path, path);
        free(f);
        return s;
    }
    dlb_status s = dlb_results_read(f, doc, err);
    if (s != DLB_OK) {
        free(f);
        /* A file that cannot be opened is bad input to compare, too. */
        return s == DLB_ERR_IO ? DLB_ERR_INPUT : s;
    }
    *file = f;
    return DLB_OK;
}

static const struct dlb_record *find_rec(const struct dlb_results *doc,
                                         const char *id)
{
    for (size_t i = 0; i < doc->n; i++)
        if (!strcmp(doc->records[i].id, id))
            return &doc->records[i];
    return NULL;
}

static int rec_ok(const struct dlb_record *rec)
{
    return rec && rec->status == DLB_REC_OK;
}

/* The record's samples divided by `scale`, malloc'ed; the median alone
 * when it has no samples. NULL when it has neither. */
static double *samples_of(const struct dlb_record *rec, double scale, size_t *n)
{
    size_t k = 0;
    double *s = malloc((rec->n_samples + 1) * sizeof *s);
    if (!s)
        return NULL;
    for (size_t i = 0; i < rec->n_samples; i++)
        if (rec->samples[i] > 0) /* false for an absent one (NAN) */
            s[k++] = rec->samples[i] / scale;
    if (!k && rec->stats.median > 0)
        s[k++] = rec->stats.median / scale;
    *n = k;
    if (!k) {
        free(s);
        return NULL;
    }
    return s;
}

/* The median a run reports: with repetitions, from the processes' own
 * (see repeat.h), which the pooled samples' would not give. */
static double median_of(const struct dlb_record *rec)
{
    struct dlb_log_spread ps;
    if (dlb_compare_processes_of(rec, 1.0, &ps))
        return exp(ps.mean);
    size_t n;
    double *s = samples_of(rec, 1.0, &n);
    struct dlb_stats st;
    double m = s && dlb_stats_compute(s, n, &st) == DLB_OK ? st.median : NAN;
    free(s);
    return m;
}

static const char *ctx_str(const struct dlb_results *doc, const char *key)
{
    const char *s = json_string_value(dlb_context_get(doc->context, key));
    return s ? s : "unknown";
}

static const char *keep(struct dlb_comparison *cmp, const char *s)
{
    return dlb_strpool_add(&cmp->strings, s);
}

static void warn(struct dlb_comparison *cmp, const char *fmt, const char *a,
                 const char *b)
{
    char buf[1024];
    snprintf(buf, sizeof buf, fmt, a, b);
    const char *w = keep(cmp, buf);
    const char **v = realloc(cmp->warnings, (cmp->n_warnings + 1) * sizeof *v);
    if (!v)
        cmp->strings.nomem = 1;
    else
        cmp->warnings = v;
    if (w && v)
        cmp->warnings[cmp->n_warnings++] = w;
}

/* Each library both objects name (context.libraries, or a device's
 * libraries: oneDNN, cuDNN, NCCL ...) whose version differs, appended to
 * buf as "name A -> B; ". */
static void library_changes(json_t *b, json_t *n, const char *where, char *buf,
                            size_t cap)
{
    const char *key;
    json_t *bv;
    json_object_foreach(b, key, bv) {
        const char *x = json_string_value(bv);
        const char *y = json_string_value(json_object_get(n, key));
        size_t used = strlen(buf);
        if (x && y && strcmp(x, y) && used + 1 < cap)
            snprintf(buf + used, cap - used, "%s%s%s %s -> %s", used ? "; " : "",
                     where, key, x, y);
    }
}

/* Two builds of one commit on another library (Debian's oneDNN against a
 * vendor's) differ by the library: at LeNet's batch 1, 18.4 against 20.7
 * us a call between oneDNN 2.6 and 3.2 here, which the gate reported as
 * the change's regression. */
static void library_warning(struct dlb_comparison *cmp,
                            const struct dlb_results *base,
                            const struct dlb_results *nw)
{
    char buf[768] = "";
    library_changes(dlb_context_get(base->context, "libraries"),
                    dlb_context_get(nw->context, "libraries"), "", buf, sizeof buf);
    json_t *bd = dlb_context_get(base->context, "devices");
    json_t *nd = dlb_context_get(nw->context, "devices");
    for (size_t i = 0; i < json_array_size(bd) && i < json_array_size(nd); i++) {
        char where[32];
        snprintf(where, sizeof where, "device %zu ", i);
        library_changes(json_object_get(json_array_get(bd, i), "libraries"),
                        json_object_get(json_array_get(nd, i), "libraries"), where,
                        buf, sizeof buf);
    }
    if (buf[0])
        warn(cmp, "the runs used different libraries (%s): the comparison "
             "measures them too, not only the change%s", buf, "");
}

static void context_warnings(struct dlb_comparison *cmp,
                             const struct dlb_results *base,
                             const struct dlb_results *nw, int normalize)
{
    const char *bh = ctx_str(base, "host"), *nh = ctx_str(nw, "host");
    const char *bc = ctx_str(base, "cpu.model"), *nc = ctx_str(nw, "cpu.model");
    if ((strcmp(bh, nh) || strcmp(bc, nc)) && !normalize) {
        warn(cmp, "the runs come from different machines (%s, %s): absolute step "
             "times are not comparable; --normalize compares each configuration "
             "relative to its own run's baseline configuration", bh, nh);
        if (strcmp(bc, nc))
            warn(cmp, "CPU models differ: %s, %s", bc, nc);
    }
    const char *bs = ctx_str(base, "suite.crc32"), *ns = ctx_str(nw, "suite.crc32");
    if (strcmp(bs, ns))
        warn(cmp, "the suite files differ (CRC-32 %s, %s): the configurations "
             "may not measure the same thing", bs, ns);
    json_t *bq = dlb_context_get(base->context, "quick");
    json_t *nq = dlb_context_get(nw->context, "quick");
    if (json_is_boolean(bq) && json_is_boolean(nq) && json_is_true(bq) != json_is_true(nq))
        warn(cmp, "one run used --quick and the other did not%s%s", "", "");
    library_warning(cmp, base, nw);
}

/* The configuration both runs are divided by: the selection's baseline
 * when it ran in both, else the first configuration that ran in both. */
static const char *reference_id(const struct dlb_results *base,
                                const struct dlb_results *nw)
{
    const char *ids[2] = {
        json_string_value(dlb_context_get(nw->selection, "baseline")),
        json_string_value(dlb_context_get(base->selection, "baseline")),
    };
    for (int i = 0; i < 2; i++)
        if (ids[i] && rec_ok(find_rec(base, ids[i])) && rec_ok(find_rec(nw, ids[i])))
            return ids[i];
    for (size_t i = 0; i < base->n; i++) {
        const char *id = base->records[i].id;
        if (rec_ok(&base->records[i]) && rec_ok(find_rec(nw, id)))
            return id;
    }
    return NULL;
}

struct judge {
    const struct dlb_compare_opts *o;
    double bscale, nscale;  /* each run's reference median, or 1 */
    const char *ref;
    double log_sum;
    size_t compared;
    const char *base_file, *new_file; /* for messages */
    double *resolution;     /* each judged row's, for the summary */
    size_t n_res;
    size_t by_samples;      /* rows judged on one process's samples */
};

/* The comparison's resolution: the median and the largest of its rows'
 * (see judge_pair), so that "same" is read with what it could not see. */
static void set_resolution(struct dlb_comparison *cmp, struct judge *J)
{
    cmp->resolution_median = cmp->resolution_max = NAN;
    if (!J->n_res)
        return;
    dlb_sort_doubles(J->resolution, J->n_res);
    size_t n = J->n_res;
    cmp->resolution_median = n % 2 ? J->resolution[n / 2]
                             : 0.5 * (J->resolution[n / 2 - 1] + J->resolution[n / 2]);
    cmp->resolution_max = J->resolution[n - 1];
}

static dlb_status judge_pair(struct judge *J, const char *id,
                             const struct dlb_record *b, const struct dlb_record *n,
                             struct dlb_cmp_row *row, struct dlb_error *err)
{
    size_t nb, nn;
    double *sb = samples_of(b, J->bscale, &nb), *sn = samples_of(n, J->nscale, &nn);
    struct dlb_ratio r;
    struct dlb_log_spread pb, pn;
    int by_process = dlb_compare_processes_of(b, J->bscale, &pb) &&
                     dlb_compare_processes_of(n, J->nscale, &pn);
    dlb_status s = !sb || !sn ? DLB_ERR_INPUT
                   : by_process ? dlb_ratio_from_processes(&pb, &pn, &r)
                   : dlb_ratio_estimate(sb, nb, sn, nn, &r);
    int have_b = sb != NULL, have_n = sn != NULL;
    free(sb);
    free(sn);
    if (by_process) {
        nb = (size_t)pb.count;
        nn = (size_t)pn.count;
    }
    /* Name the file at fault: status ok without a positive step time is
     * a damaged or hand-edited record. */
    if (!have_b || !have_n)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: configuration %s has status ok "
                          "but no usable step times (no positive \"samples\" or "
                          "\"stats.median\")", !have_b ? J->base_file : J->new_file, id);
    if (s != DLB_OK)
        return dlb_errorf(err, s == DLB_ERR_NOMEM ? s : DLB_ERR_INPUT,
                          "configuration %s: no usable step times in both runs", id);
    int is_ref = J->ref && !strcmp(J->ref, id);
    /* Too few samples for a test: never significant. */
    int testable = nb >= 2 && nn >= 2 && isfinite(r.p);
    double p = testable ? r.p : 1.0;
    const char *verdict = "same";
    if (!is_ref && p < J->o->alpha && r.ratio > 1 + J->o->threshold)
        verdict = "slower";
    else if (!is_ref && p < J->o->alpha && r.ratio < 1 - J->o->threshold)
        verdict = "faster";
    row->verdict = verdict;
    row->ratio = r.ratio;
    row->ratio_ci_lo = r.lo;
    row->ratio_ci_hi = r.hi;
    row->p = testable ? r.p : NAN;
    row->base_n = (long long)nb;
    row->new_n = (long long)nn;
    row->test = by_process ? "welch" : "mann-whitney";
    /* How small a change this row could have seen: a true ratio further
     * from 1 than the interval's half-width (on the log scale) would
     * have put 1 outside it, and a change must pass the threshold too. */
    double half = fmax(log(r.hi / r.ratio), log(r.ratio / r.lo));
    J->by_samples += !is_ref && !by_process;
    if (!is_ref && isfinite(half) && nb >= 2 && nn >= 2) {
        double res = fmax(expm1(half), J->o->threshold);
        row->resolution = res;
        J->resolution[J->n_res++] = res;
    }
    if (is_ref) {
        row->reference = 1;
    } else {
        J->log_sum += log(r.ratio);
        J->compared++;
    }
    return DLB_OK;
}

static void count(struct dlb_comparison *cmp, const char *verdict)
{
    long long *c = !strcmp(verdict, "faster") ? &cmp->faster
                   : !strcmp(verdict, "slower") ? &cmp->slower
                   : !strcmp(verdict, "same") ? &cmp->same
                   : !strcmp(verdict, "new") ? &cmp->added : &cmp->missing;
    (*c)++;
}

static void note_status(struct dlb_comparison *cmp, struct dlb_cmp_row *row,
                        const char *which, const struct dlb_record *rec)
{
    char buf[600];
    if (!rec)
        snprintf(buf, sizeof buf, "not in %s", which);
    else
        snprintf(buf, sizeof buf, "%s: %s%s%s", which,
                 dlb_rec_status_name(rec->status), rec->reason ? ": " : "",
                 rec->reason ? rec->reason : "");
    row->note = keep(cmp, buf);
}

/* A row judged on a doubtful record (either run's) still counts, a
 * regression included: CI fails on it, but says the figure may be the
 * machine's rather than the change's. */
static void note_doubtful(struct dlb_comparison *cmp, struct dlb_cmp_row *row,
                          const struct dlb_record *b, const struct dlb_record *n)
{
    const char *bw = b->has_system ? b->system.doubtful : NULL;
    const char *nw = n->has_system ? n->system.doubtful : NULL;
    if (!bw && !nw)
        return;
    char why[600], note[1000];
    snprintf(why, sizeof why, "%s%s%s%s%s", bw ? "base: " : "", bw ? bw : "",
             bw && nw ? "; " : "", nw ? "new: " : "", nw ? nw : "");
    const char *old = row->note;
    snprintf(note, sizeof note, "%s%sdoubtful: %s; re-measure on a quiet machine",
             old ? old : "", old ? "; " : "", why);
    row->doubtful_why = keep(cmp, why);
    row->note = keep(cmp, note);
}

static dlb_status one_config(struct judge *J, struct dlb_comparison *cmp,
                             const char *id, const struct dlb_record *b,
                             const struct dlb_record *n, struct dlb_error *err)
{
    if (!rec_ok(b) && !rec_ok(n))
        return DLB_OK; /* ran in neither: nothing to say */
    struct dlb_cmp_row *row = &cmp->rows[cmp->n_rows++];
    row->id = keep(cmp, id);
    row->base_median_s = rec_ok(b) ? median_of(b) : NAN;
    row->new_median_s = rec_ok(n) ? median_of(n) : NAN;
    dlb_status s = DLB_OK;
    if (rec_ok(b) && rec_ok(n)) {
        s = judge_pair(J, id, b, n, row, err);
        note_doubtful(cmp, row, b, n);
        dlb_compare_accuracy(cmp, b, n, row);
    } else if (rec_ok(b)) {
        row->verdict = "missing";
        note_status(cmp, row, "new", n);
    } else {
        row->verdict = "new";
        if (b)
            note_status(cmp, row, "base", b);
    }
    if (s == DLB_OK)
        count(cmp, row->verdict);
    return s;
}

static dlb_status set_reference(struct judge *J, struct dlb_comparison *cmp,
                                const struct dlb_results *base,
                                const struct dlb_results *nw, const char *base_file,
                                const char *new_file, struct dlb_error *err)
{
    J->bscale = J->nscale = 1.0;
    if (!J->o->normalize)
        return DLB_OK;
    J->ref = reference_id(base, nw);
    if (!J->ref)
        return dlb_errorf(err, DLB_ERR_INPUT, "--normalize: no configuration ran "
                          "in both %s and %s to normalize by", base_file, new_file);
    J->bscale = median_of(find_rec(base, J->ref));
    J->nscale = median_of(find_rec(nw, J->ref));
    if (!(J->bscale > 0) || !(J->nscale > 0))
        return dlb_errorf(err, DLB_ERR_INPUT, "--normalize: configuration %s has "
                          "no step times", J->ref);
    cmp->normalized_by = keep(cmp, J->ref);
    return DLB_OK;
}

/* A row with nothing judged in it. */
static void row_init(struct dlb_cmp_row *r)
{
    memset(r, 0, sizeof *r);
    r->base_median_s = r->new_median_s = r->ratio = NAN;
    r->ratio_ci_lo = r->ratio_ci_hi = r->p = r->resolution = NAN;
    r->base_n = r->new_n = -1;
    r->base_accuracy = r->new_accuracy = r->accuracy_change = NAN;
    r->accuracy_ci = NAN;
}

static dlb_status compare(const struct dlb_results *base, const char *base_file,
                          const struct dlb_results *nw, const char *new_file,
                          const struct dlb_compare_opts *o,
                          struct dlb_comparison *cmp, struct dlb_error *err)
{
    cmp->base = keep(cmp, base_file);
    cmp->new_file = keep(cmp, new_file);
    cmp->threshold = o->threshold;
    cmp->alpha = o->alpha;
    cmp->accuracy_threshold = o->accuracy_threshold;
    cmp->geomean_ratio = cmp->resolution_median = cmp->resolution_max = NAN;
    cmp->rows = calloc(base->n + nw->n + 1, sizeof *cmp->rows);
    struct judge J = {.o = o, .base_file = base_file, .new_file = new_file};
    J.resolution = malloc((base->n + 1) * sizeof *J.resolution);
    if (!cmp->rows || !J.resolution) {
        free(J.resolution);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < base->n + nw->n; i++)
        row_init(&cmp->rows[i]);
    dlb_status s = set_reference(&J, cmp, base, nw, base_file, new_file, err);
    context_warnings(cmp, base, nw, o->normalize);
    for (size_t i = 0; i < base->n && s == DLB_OK; i++) {
        const char *id = base->records[i].id;
        s = one_config(&J, cmp, id, &base->records[i], find_rec(nw, id), err);
    }
    for (size_t i = 0; i < nw->n && s == DLB_OK; i++) {
        const char *id = nw->records[i].id;
        if (!find_rec(base, id))
            s = one_config(&J, cmp, id, NULL, &nw->records[i], err);
    }
    if (s != DLB_OK) {
        free(J.resolution);
        return s;
    }
    set_resolution(cmp, &J);
    free(J.resolution);
    /* Samples of one process vary less than processes do: two back-to-back
     * single-process runs of one build here differed by 8% at p = 4e-6. */
    if (J.by_samples)
        warn(cmp, "%s configuration(s) were measured in one process on a side and "
             "are compared on their samples: the interval does not cover the spread "
             "between processes (2-8%% on a quiet 2-core VM), so a verdict may be a "
             "difference between two processes; run both with repetitions = 3 or "
             "more, or both builds together (%s)",
             J.by_samples == J.compared ? "all" : "some", "ci/perf-check --against");
    if (o->normalize && !J.compared)
        warn(cmp, "only the reference configuration (%s) ran in both runs: "
             "relative to it, nothing is left to compare%s", J.ref, "");
    cmp->compared = (long long)J.compared;
    if (J.compared)
        cmp->geomean_ratio = exp(J.log_sum / (double)J.compared);
    return cmp->strings.nomem ? dlb_errorf(err, DLB_ERR_NOMEM, "out of memory")
                              : DLB_OK;
}

dlb_status dlb_compare(json_t *base, const char *base_file, json_t *nw,
                       const char *new_file, const struct dlb_compare_opts *o,
                       struct dlb_comparison *out, struct dlb_error *err)
{
    struct dlb_results b, n;
    memset(out, 0, sizeof *out);
    dlb_status s = dlb_results_parse(base, base_file, &b, err);
    if (s != DLB_OK)
        return s;
    s = dlb_results_parse(nw, new_file, &n, err);
    if (s == DLB_OK) {
        s = compare(&b, base_file, &n, new_file, o, out, err);
        dlb_results_free(&n);
    }
    dlb_results_free(&b);
    if (s != DLB_OK)
        dlb_comparison_free(out);
    return s;
}
