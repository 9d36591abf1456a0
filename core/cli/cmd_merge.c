/* `dlbench merge DIR...`: see cmd_merge.h. The merged directory is a run
 * directory like any other (suite.ini, invocation.json, journal.jsonl,
 * results, report), so `dlbench --resume` can fill in what no shard ran. */
#include "cli/cmd_merge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compare/compare.h"
#include "results/dataset_context.h"
#include "results/device_record.h"
#include "results/invocation.h"
#include "results/repeat.h"
#include "run/postrun.h"
#include "plan/session.h"
#include "select/vs_baseline.h"
#include "util/path.h"

struct shard {
    const char *dir;
    json_t *doc;    /* results.json */
    struct dlb_results res; /* the same, its records typed */
    struct dlb_invocation inv;
    int k, n;
};

static const char *suite_member(const struct shard *s, const char *key)
{
    char name[64];
    snprintf(name, sizeof name, "suite.%s", key);
    const char *v = json_string_value(dlb_context_get(s->res.context, name));
    return v ? v : "?";
}

static dlb_status load_shard(const char *dir, struct shard *s,
                             struct dlb_error *err)
{
    char *res = dlb_path_join(dir, "results.json"), *inv = dlb_path_join(dir, "invocation.json");
    dlb_status st = DLB_OK;
    s->dir = dir;
    if (!res || !inv)
        st = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    else if ((st = dlb_results_read(res, &s->doc, err)) != DLB_OK ||
             (st = dlb_results_parse(s->doc, res, &s->res, err)) != DLB_OK)
        ;
    else if ((st = dlb_invocation_read(inv, &s->inv, err)) == DLB_ERR_IO) {
        struct dlb_error e = *err;
        st = dlb_errorf(err, DLB_ERR_INPUT, "%s: cannot read it (%s): %s is not "
                        "a dlbench run directory", inv, e.msg, dir);
    }
    int sharded = json_is_object(dlb_context_get(s->res.context, "shard"));
    s->k = sharded ? (int)json_integer_value(dlb_context_get(s->res.context, "shard.k")) : 1;
    s->n = sharded ? (int)json_integer_value(dlb_context_get(s->res.context, "shard.n")) : 1;
    free(res);
    free(inv);
    return st;
}

/* Shards join only when they ran the same suite file the same way; so do
 * runs merged as repetitions, which must hold the same shard (or none). */
static dlb_status check_pair(const struct shard *a, const struct shard *b,
                             int as_reps, struct dlb_error *err)
{
    if (strcmp(suite_member(a, "name"), suite_member(b, "name")))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s ran suite '%s' and %s suite "
                          "'%s': only shards of one suite merge", a->dir,
                          suite_member(a, "name"), b->dir,
                          suite_member(b, "name"));
    if (strcmp(suite_member(a, "crc32"), suite_member(b, "crc32")))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s and %s ran different versions "
                          "of suite '%s' (suite hashes %s and %s): only shards "
                          "of one suite file merge", a->dir, b->dir,
                          suite_member(a, "name"),
                          suite_member(a, "crc32"),
                          suite_member(b, "crc32"));
    if (!dlb_invocation_same_plan(&a->inv, &b->inv))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s and %s ran suite '%s' with "
                          "different --set or --quick options (see their "
                          "invocation.json): their plans differ", a->dir, b->dir,
                          suite_member(a, "name"));
    if (as_reps && (a->n != b->n || a->k != b->k))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s is shard %d/%d and %s shard "
                          "%d/%d: repetitions of a run measure the same "
                          "configurations", a->dir, a->k, a->n, b->dir, b->k, b->n);
    if (as_reps)
        return DLB_OK;
    if (a->n != b->n)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s is shard %d/%d and %s shard "
                          "%d/%d: shards of one run share N", a->dir, a->k,
                          a->n, b->dir, b->k, b->n);
    if (a->k == b->k)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s and %s are both shard %d/%d",
                          a->dir, b->dir, a->k, a->n);
    return DLB_OK;
}

/* Every run's records as repetition s of its configuration: the run
 * directories of one suite measured in turn (ci/perf-check interleaves
 * two builds' runs so), each a process of every configuration. */
static dlb_status gather_reps(struct shard *sh, size_t n, json_t *all,
                              struct dlb_error *err)
{
    for (size_t s = 0; s < n; s++) {
        for (size_t i = 0; i < sh[s].res.n; i++) {
            /* a copy of the struct that owns nothing: only written */
            struct dlb_record rec = sh[s].res.records[i];
            if (rec.repetitions || rec.round >= 0)
                return dlb_errorf(err, DLB_ERR_INPUT, "%s: configuration %s ran "
                                  "with repetitions or a search's rounds already; "
                                  "--as-repetitions merges runs of one process a "
                                  "configuration (repetitions = 1, search = grid)",
                                  sh[s].dir, rec.id);
            rec.rep = (long long)s;
            json_t *copy = dlb_record_write(&rec);
            if (!copy)
                return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
            json_array_append_new(all, copy);
        }
    }
    return DLB_OK;
}

/* Every shard's records, refusing a configuration that two shards ran. */
static dlb_status gather(struct shard *sh, size_t n, json_t *all,
                         struct dlb_error *err)
{
    for (size_t s = 0; s < n; s++) {
        for (size_t i = 0; i < sh[s].res.n; i++) {
            const struct dlb_record *rec = &sh[s].res.records[i];
            for (size_t t = 0; t < s; t++)
                for (size_t j = 0; j < sh[t].res.n; j++)
                    if (sh[t].res.records[j].index == rec->index)
                        return dlb_errorf(err, DLB_ERR_INPUT, "configuration %lld "
                                          "(%s) is in %s and in %s: the shards "
                                          "overlap", rec->index, rec->id,
                                          sh[t].dir, sh[s].dir);
            json_array_append(all, rec->json);
        }
    }
    return DLB_OK;
}

/* The options the shards ran with, for the plan. */
static dlb_status shard_options(const struct dlb_options *o,
                                const struct dlb_invocation *inv,
                                struct dlb_options *m)
{
    size_t i;
    memset(m, 0, sizeof *m);
    m->config_index = -1;
    m->record_fd = -1;
    m->quick = inv->quick;
    for (i = 0; i < inv->n_sets; i++)
        if (dlb_cli_add_set(m, inv->sets[i]) != DLB_OK)
            return DLB_ERR_NOMEM;
    for (i = 0; i < o->n_plugin_dirs; i++)
        if (dlb_cli_add_plugin_dir(m, o->plugin_dirs[i]) != DLB_OK)
            return DLB_ERR_NOMEM;
    for (i = 0; i < inv->n_plugin_dirs; i++)
        if (dlb_cli_add_plugin_dir(m, inv->plugin_dirs[i]) != DLB_OK)
            return DLB_ERR_NOMEM;
    return DLB_OK;
}

/* The records in plan order; configurations no shard ran are counted. */
static json_t *plan_order(const struct dlb_plan *p, json_t *all, size_t *missing)
{
    json_t *out = json_array();
    struct dlb_record *recs;
    size_t n;
    *missing = 0;
    if (dlb_records_read(all, NULL, &recs, &n, NULL) != DLB_OK) {
        json_decref(out); /* never: every record was read before */
        return NULL;
    }
    for (size_t c = 0; c < p->n; c++) {
        json_t *found = NULL;
        for (size_t i = 0; i < n; i++)
            if (recs[i].index == (long long)p->configs[c].index)
                found = recs[i].json;
        if (found)
            json_array_append(out, found);
        else
            (*missing)++;
    }
    dlb_records_free(recs, n);
    return out;
}

static dlb_status copy_text(const char *from, const char *to,
                            struct dlb_error *err)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wbx") : NULL;
    char buf[8192];
    size_t n;
    int bad = !in || !out;
    while (!bad && (n = fread(buf, 1, sizeof buf, in)) > 0)
        bad = fwrite(buf, 1, n, out) != n;
    bad |= in && ferror(in);
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        bad = 1;
    return bad ? dlb_errorf(err, DLB_ERR_IO, "cannot copy %s to %s: %s", from,
                            to, strerror(errno))
               : DLB_OK;
}

/* suite.ini, invocation.json (without the shard) and a journal holding
 * every record, so that --resume runs what no shard did. */
static dlb_status write_run_files(const char *dir, const struct shard *first,
                                  json_t *records, size_t reps, struct dlb_error *err)
{
    char *src = dlb_path_join(first->dir, "suite.ini"), *dst = dlb_path_join(dir, "suite.ini");
    char *inv = dlb_path_join(dir, "invocation.json"), *logs = dlb_path_join(dir, "logs");
    struct dlb_journal *j = NULL;
    dlb_status st = src && dst && inv && logs
        ? copy_text(src, dst, err) : dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    /* the first shard's, without the shard; the strings stay its own */
    struct dlb_invocation merged = first->inv;
    char set[64];
    merged.shard_k = merged.shard_n = 0;
    merged.sets = malloc((first->inv.n_sets + 1) * sizeof *merged.sets);
    if (st == DLB_OK && !merged.sets)
        st = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    if (st == DLB_OK) {
        for (size_t i = 0; i < first->inv.n_sets; i++)
            merged.sets[i] = first->inv.sets[i];
        /* --resume of the merged directory sees as many passes as ran */
        snprintf(set, sizeof set, "repetitions=%zu", reps);
        if (reps > 1)
            merged.sets[merged.n_sets++] = set;
    }
    json_t *copy = st == DLB_OK ? dlb_invocation_write(&merged) : NULL;
    if (st == DLB_OK && (!copy || json_dump_file(copy, inv, JSON_INDENT(2)) != 0))
        st = dlb_errorf(err, DLB_ERR_IO, "cannot write %s", inv);
    free(merged.sets);
    if (st == DLB_OK)
        mkdir(logs, 0755);
    if (st == DLB_OK && (st = dlb_journal_open(dir, &j, err)) == DLB_OK) {
        size_t i;
        json_t *rec;
        json_array_foreach(records, i, rec)
            if (st == DLB_OK)
                st = dlb_journal_append(j, rec, err);
        dlb_journal_close(j);
    }
    json_decref(copy);
    free(src);
    free(dst);
    free(inv);
    free(logs);
    return st;
}

static json_t *merged_context(struct shard *sh, size_t n, const char *dir,
                              int as_reps)
{
    json_t *ctx = json_deep_copy(sh[0].res.context);
    json_t *from = json_array();
    for (size_t s = 0; s < n; s++) {
        json_t *c = sh[s].res.context;
        json_array_append_new(from, json_pack("{s:s,s:O?,s:i,s:i,s:O?}", "dir",
                                              sh[s].dir, "host",
                                              dlb_context_get(c, "host"), "k",
                                              sh[s].k, "n", sh[s].n, "run_s",
                                              dlb_context_get(c, "run_s")));
    }
    json_object_del(ctx, "shard");
    json_object_set_new(ctx, "run_dir", json_string(dir));
    json_object_set_new(ctx, "merged_from", from);
    json_object_set_new(ctx, "merged_as", json_string(as_reps ? "repetitions" : "shards"));
    return ctx;
}

static int failed(json_t *rec)
{
    struct dlb_record r;
    if (dlb_record_read(rec, NULL, &r, NULL) != DLB_OK)
        return 1;
    int bad = r.status != DLB_REC_OK && r.status != DLB_REC_SKIPPED;
    dlb_record_free(&r);
    return bad;
}

/* Results, table, selection, plots and report of the merged run. */
static int finish(const char *dir, struct dlb_session *ses, json_t *ctx,
                  json_t *recs, const struct dlb_options *o)
{
    struct dlb_error err = {""};
    int failures = 0, winner = 0;
    size_t i;
    json_t *rec;
    dlb_vs_baseline_annotate(&ses->plan, recs);
    struct dlb_selection sel;
    if (dlb_postrun_results(dir, &ses->plan, ctx, recs, &sel, &err) != DLB_OK) {
        fprintf(stderr, "dlbench: merge: %s\n", err.msg);
        dlb_selection_free(&sel);
        return 1;
    }
    char *table = dlb_path_join(dir, "table.txt");
    FILE *tf = table ? fopen(table, "w") : NULL;
    free(table);
    if (tf) {
        dlb_results_print(tf, DLB_FORMAT_TABLE, ctx, recs);
        dlb_vs_baseline_print(tf, recs);
    }
    dlb_results_print(stdout, o->format, ctx, recs);
    if (o->format == DLB_FORMAT_TABLE)
        dlb_vs_baseline_print(stdout, recs);
    struct dlb_postrun pr = {dir, ses->suite_path, &ses->plan, ctx, recs,
                             o->format == DLB_FORMAT_TABLE ? stdout : stderr, tf,
                             sel.present ? &sel : NULL};
    int post_failed = dlb_postrun(&pr, &winner) != DLB_OK;
    dlb_selection_free(&sel);
    if (tf)
        fclose(tf);
    json_array_foreach(recs, i, rec)
        failures += failed(rec);
    return failures || !winner || post_failed ? 1 : 0;
}

int dlb_cmd_merge(struct dlb_options *o)
{
    struct dlb_error err = {""};
    struct dlb_session ses;
    struct dlb_options m;
    size_t n = o->n_args, missing = 0;
    int rc = 2;
    char *dir = NULL, *suite = NULL;
    json_t *all = json_array(), *recs = NULL, *ctx = NULL;
    memset(&ses, 0, sizeof ses);
    memset(&m, 0, sizeof m);
    if (n < 1) {
        fprintf(stderr, "dlbench: merge: which run directories? e.g. dlbench "
                "merge results/dp/shard-1 results/dp/shard-2 --out merged\n");
        json_decref(all);
        return 2;
    }
    struct shard *sh = calloc(n, sizeof *sh);
    dlb_status st = sh ? DLB_OK : DLB_ERR_NOMEM;
    for (size_t s = 0; st == DLB_OK && s < n; s++)
        st = load_shard(o->args[s], &sh[s], &err);
    for (size_t s = 0; st == DLB_OK && s < n; s++)
        for (size_t t = 0; st == DLB_OK && t < s; t++)
            st = check_pair(&sh[t], &sh[s], o->as_repetitions, &err);
    if (st == DLB_OK && o->as_repetitions && n < 2)
        st = dlb_errorf(&err, DLB_ERR_INPUT, "merge --as-repetitions: %s alone is "
                        "no repetition; give two run directories or more", o->args[0]);
    if (st == DLB_OK)
        st = o->as_repetitions ? gather_reps(sh, n, all, &err) : gather(sh, n, all, &err);
    if (st == DLB_OK)
        st = shard_options(o, &sh[0].inv, &m);
    if (st == DLB_OK && o->as_repetitions) {
        char set[64];
        snprintf(set, sizeof set, "repetitions=%zu", n);
        st = dlb_cli_add_set(&m, set);
    }
    if (st == DLB_OK) {
        dir = o->out_dir ? strdup(o->out_dir)
                         : dlb_rundir_default("results", suite_member(&sh[0], "name"));
        st = dir ? dlb_rundir_create(dir, &err) : DLB_ERR_NOMEM;
    }
    if (st == DLB_OK)
        st = write_run_files(dir, &sh[0], all, o->as_repetitions ? n : 1, &err);
    if (st == DLB_OK && !(suite = dlb_path_join(dir, "suite.ini")))
        st = DLB_ERR_NOMEM;
    if (st == DLB_OK)
        st = dlb_session_open(&ses, &m, suite, &err);
    if (st != DLB_OK) {
        fprintf(stderr, "dlbench: merge: %s\n", err.msg[0] ? err.msg
                                                           : dlb_status_name(st));
    } else {
        json_t *merged = o->as_repetitions ? dlb_reps_merge(all, (int)n) : NULL;
        recs = plan_order(&ses.plan, merged ? merged : all, &missing);
        json_decref(merged);
        if (!recs)
            recs = json_array();
        ctx = merged_context(sh, n, dir, o->as_repetitions);
        dlb_context_add_devices(ctx, recs);
        dlb_context_add_datasets(ctx, recs);
        fprintf(stderr, "dlbench: merged %zu run director%s of suite %s%s: %zu of "
                "%zu configurations -> %s\n", n, n == 1 ? "y" : "ies",
                ses.suite.name, o->as_repetitions ? " as repetitions" : "",
                json_array_size(recs), ses.plan.n, dir);
        rc = finish(dir, &ses, ctx, recs, o);
        if (missing) {
            fprintf(stderr, "dlbench: %zu configuration%s in no shard; run "
                    "%s with: dlbench --resume %s\n", missing,
                    missing == 1 ? " is" : "s are", missing == 1 ? "it" : "them",
                    dir);
            rc = rc ? rc : 1;
        }
    }
    for (size_t s = 0; sh && s < n; s++) {
        dlb_results_free(&sh[s].res);
        json_decref(sh[s].doc);
        dlb_invocation_free(&sh[s].inv);
    }
    free(sh);
    json_decref(all);
    json_decref(recs);
    json_decref(ctx);
    dlb_session_close(&ses);
    dlb_cli_free(&m);
    free(dir);
    free(suite);
    return rc;
}
