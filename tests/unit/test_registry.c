/* The plugin registry: good plugins load, and each faulty one is refused
 * with one line that names it and says what to do. Also checks the facts
 * other tests build on: the baseline plugin's descriptor, the skeleton's
 * and testload's hooks.
 *
 * Needs the built plugins: $DLB_TEST_PLUGIN_DIR holds testload.so and the
 * faulty ones of tests/plugins; null.so and skeleton.so are looked up there
 * and then in $DLB_PLUGIN_DIR, when set (their checks are skipped, saying
 * so, when the build left them out). Skips (77) without
 * $DLB_TEST_PLUGIN_DIR. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "suite/registry.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *plugin_dir;
/* plugin_dir, then $DLB_PLUGIN_DIR when set */
static const char *all_dirs[2];
static size_t n_all_dirs;

static int contains(const char *msg, const char *phrase)
{
    if (strstr(msg, phrase))
        return 1;
    fprintf(stderr, "  message: %s\n  lacks:   %s\n", msg, phrase);
    return 0;
}

/* Load `name` from a fresh registry searching `dirs`. */
static dlb_status load_from(const char *const *dirs, size_t n, const char *name,
                            struct dlb_error *err)
{
    struct dlb_registry r;
    dlb_status st = dlb_registry_init(&r, dirs, n, NULL, err);
    if (st != DLB_OK)
        return st;
    const struct dlb_loaded_plugin *p = NULL;
    st = dlb_registry_load(&r, name, &p, err);
    if (st != DLB_OK)
        CHECK(r.n_loaded == 0);
    dlb_registry_free(&r);
    return st;
}

/* ---- a mock host, for calling plugin hooks ---------------------------- */

static char metric_name[64];
static double metric_value;
static int metric_calls;
static size_t alloc_budget = (size_t)-1, alloc_live;

static void mock_log(const struct dlb_host *h, enum dlb_log_level lvl,
                     const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void mock_log(const struct dlb_host *h, enum dlb_log_level lvl,
                     const char *fmt, ...)
{
    (void)h;
    (void)lvl;
    va_list ap;
    va_start(ap, fmt);
    fputs("  plugin log: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static dlb_status mock_metric(const struct dlb_host *h, const char *name,
                              const char *unit, double value)
{
    (void)h;
    (void)unit;
    snprintf(metric_name, sizeof metric_name, "%s", name);
    metric_value = value;
    metric_calls++;
    return DLB_OK;
}

static void *mock_alloc(const struct dlb_host *h, size_t bytes)
{
    (void)h;
    if (bytes > alloc_budget - alloc_live)
        return NULL;
    void *p = malloc(bytes);
    if (p)
        alloc_live += bytes;
    return p;
}

static void mock_free(const struct dlb_host *h, void *p, size_t bytes)
{
    (void)h;
    if (p)
        alloc_live -= bytes;
    free(p);
}

static const struct dlb_host mock_host = {
    .struct_size = sizeof(struct dlb_host),
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .log = mock_log,
    .metric = mock_metric,
    .alloc = mock_alloc,
    .free = mock_free,
    .raw_alloc = mock_alloc,
    .raw_free = mock_free,
    .backend_name = "ref",
};

/* Values for a table from its defaults, with the enum/int texts the tests
 * need; only .i and .s are read by the plugins under test. */
static void values_for(const struct dlb_plugin *d, struct dlb_value *v,
                       const char *const *texts)
{
    for (unsigned k = 0; k < d->n_params; k++) {
        const struct dlb_param_def *def = &d->params[k];
        const char *t = texts && texts[k] ? texts[k] : def->def;
        v[k].s = t;
        v[k].f = 0;
        v[k].i = 0;
        if (def->type == DLB_PARAM_ENUM) {
            for (int c = 0; def->choices[c]; c++)
                if (strcmp(def->choices[c], t) == 0)
                    v[k].i = c;
        } else if (def->type == DLB_PARAM_BOOL) {
            v[k].i = strcmp(t, "on") == 0 || strcmp(t, "1") == 0;
        } else {
            v[k].i = strtoll(t, NULL, 10);
        }
    }
}

/* ---- good plugins ----------------------------------------------------- */

/* Load a shipped plugin from all_dirs; 0 (with a note) when the build
 * left it out. */
static int load_shipped(struct dlb_registry *r, const char *name,
                        const struct dlb_loaded_plugin **p)
{
    struct dlb_error err = { "" };
    CHECK(dlb_registry_init(r, all_dirs, n_all_dirs, NULL, &err) == DLB_OK);
    dlb_status st = dlb_registry_load(r, name, p, &err);
    if (st == DLB_ERR_INPUT && strstr(err.msg, "no file")) {
        fprintf(stderr, "  %s.so not built: skipping its checks\n", name);
        dlb_registry_free(r);
        return 0;
    }
    CHECK(st == DLB_OK);
    if (st != DLB_OK) {
        fprintf(stderr, "  %s\n", err.msg);
        dlb_registry_free(r);
        return 0;
    }
    return 1;
}

static void test_null_is_the_baseline(void)
{
    struct dlb_registry r;
    struct dlb_error err = { "" };
    const struct dlb_loaded_plugin *p = NULL, *again = NULL;
    if (!load_shipped(&r, "null", &p))
        return;
    const struct dlb_plugin *d = p->desc;
    CHECK(strcmp(d->name, "null") == 0);
    CHECK(strcmp(d->summary, "no optimization: the baseline") == 0);
    CHECK(d->n_params == 0 && !d->init && !d->probe);
    CHECK(!d->allocator && !d->batch_source && !d->precision &&
          !d->transform && !d->executor && !d->workload);
    CHECK(strstr(p->path, "/null.so") != NULL);
    /* Loaded once: a second load returns the same entry. */
    CHECK(dlb_registry_load(&r, "null", &again, &err) == DLB_OK);
    CHECK(again == p && r.n_loaded == 1);
    dlb_registry_free(&r);
}

static void test_skeleton_hooks_work(void)
{
    struct dlb_registry r;
    const struct dlb_loaded_plugin *p = NULL;
    if (!load_shipped(&r, "skeleton", &p))
        return;
    const struct dlb_plugin *d = p->desc;
    CHECK(d->n_params == 3);
    CHECK(d->probe && d->init && d->fini && d->metrics);
    /* The example changes nothing in a run. */
    CHECK(!d->allocator && !d->batch_source && !d->precision &&
          !d->transform && !d->executor && !d->workload);

    struct dlb_value v[3];
    const char *texts[3] = { "7", NULL, NULL };
    values_for(d, v, texts);
    struct dlb_params params = { d->params, v, 3 };
    char reason[128] = "";
    CHECK(d->probe(&mock_host, &params, reason, sizeof reason) == DLB_OK);
    void *state = NULL;
    CHECK(d->init(&mock_host, &params, &state) == DLB_OK);
    metric_calls = 0;
    CHECK(d->metrics(state, &mock_host) == DLB_OK);
    CHECK(metric_calls == 1 && strcmp(metric_name, "depth") == 0);
    CHECK_NEAR(metric_value, 7.0, 0);
    d->fini(state);
    dlb_registry_free(&r);
}

/* testload's parameters: work, fault, fault_at, samples_per_step,
 * slow_after, clock, noise, accuracy, accuracy_sd, accuracy_shared_sd,
 * test_images. Value lists below name the first ones; the rest take
 * their defaults. */
enum { NP = 11 };

static void test_testload_faults(void)
{
    struct dlb_registry r;
    struct dlb_error err = { "" };
    const char *dirs[] = { plugin_dir };
    CHECK(dlb_registry_init(&r, dirs, 1, NULL, &err) == DLB_OK);
    const struct dlb_loaded_plugin *p = NULL;
    CHECK(dlb_registry_load(&r, "testload", &p, &err) == DLB_OK);
    if (!p) {
        fprintf(stderr, "  %s\n", err.msg);
        dlb_registry_free(&r);
        return;
    }
    const struct dlb_plugin *d = p->desc;
    CHECK(d->workload && d->workload->evaluate && d->n_params == NP);
    CHECK(strcmp(d->params[0].name, "work") == 0);
    CHECK(strcmp(d->params[1].name, "fault") == 0);
    CHECK(strcmp(d->params[2].name, "fault_at") == 0);
    CHECK(strcmp(d->params[3].name, "samples_per_step") == 0);
    CHECK(strcmp(d->params[4].name, "slow_after") == 0);
    CHECK(strcmp(d->params[5].name, "clock") == 0);
    CHECK(strcmp(d->params[6].name, "noise") == 0);
    CHECK(strcmp(d->params[7].name, "accuracy") == 0);
    CHECK(strcmp(d->params[10].name, "test_images") == 0);
    if (d->n_params != NP) {
        dlb_registry_free(&r);
        return;
    }

    struct dlb_value v[NP];
    struct dlb_params params = { d->params, v, NP };
    char reason[128] = "";

    /* fault=none: the checksum counts the iterations of the steps run;
     * on the real clock the workload keeps no clock of its own. */
    const char *plain[NP] = { "10", "none", "step", "5", "0", "real", "0" };
    values_for(d, v, plain);
    void *state = NULL, *wl = NULL;
    struct dlb_workload_info info = { 0, 0 };
    CHECK(d->probe(&mock_host, &params, reason, sizeof reason) == DLB_OK);
    CHECK(d->init(&mock_host, &params, &state) == DLB_OK);
    CHECK(d->workload->setup(state, &mock_host, &info, &wl) == DLB_OK);
    CHECK_NEAR(info.samples_per_step, 5.0, 0);
    for (int i = 0; i < 4; i++)
        CHECK(d->workload->step(wl) == DLB_OK);
    CHECK(d->workload->evaluate(wl) == DLB_OK);
    CHECK(strcmp(metric_name, "checksum") == 0);
    CHECK_NEAR(metric_value, 40.0, 0);
    CHECK(d->abi_major == DLB_PLUGIN_ABI_MAJOR && d->workload->now &&
          d->workload->now(wl) < 0);
    d->workload->teardown(wl);
    d->fini(state);

    /* clock=synthetic: its own clock starts at 0 and each step of 10
     * iterations advances it by 10 ns; the checksum is unchanged. */
    const char *synth[NP] = { "10", "none", "step", "5", "0", "synthetic", "0" };
    values_for(d, v, synth);
    CHECK(d->init(&mock_host, &params, &state) == DLB_OK);
    CHECK(d->workload->setup(state, &mock_host, &info, &wl) == DLB_OK);
    CHECK(d->workload->now(wl) == 0);
    for (int i = 0; i < 4; i++)
        CHECK(d->workload->step(wl) == DLB_OK);
    CHECK_NEAR(d->workload->now(wl), 40e-9, 1e-20);
    CHECK(d->workload->evaluate(wl) == DLB_OK);
    CHECK_NEAR(metric_value, 40.0, 0);
    d->workload->teardown(wl);
    d->fini(state);

    /* noise=0.1 (values_for leaves floats at 0): each step's time within
     * 10% of 10 ns, not all alike, and the same sequence again from the
     * same seed. */
    v[6].f = 0.1;
    double first[8], again[8];
    for (int run = 0; run < 2; run++) {
        double *t = run ? again : first;
        CHECK(d->init(&mock_host, &params, &state) == DLB_OK);
        CHECK(d->workload->setup(state, &mock_host, &info, &wl) == DLB_OK);
        double before = d->workload->now(wl);
        for (int i = 0; i < 8; i++) {
            CHECK(d->workload->step(wl) == DLB_OK);
            double after = d->workload->now(wl);
            t[i] = after - before;
            before = after;
            CHECK(t[i] >= 9e-9 * (1 - 1e-9) && t[i] <= 11e-9 * (1 + 1e-9));
        }
        d->workload->teardown(wl);
        d->fini(state);
    }
    int alike = 1;
    for (int i = 1; i < 8; i++)
        alike &= first[i] == first[0];
    CHECK(!alike);
    CHECK(memcmp(first, again, sizeof first) == 0);

    /* fault=unsupported: skipped, with the reason the tests look for. */
    const char *unsup[NP] = { NULL, "unsupported", NULL, NULL, NULL, NULL, NULL };
    values_for(d, v, unsup);
    CHECK(d->probe(&mock_host, &params, reason, sizeof reason) ==
          DLB_ERR_UNSUPPORTED);
    CHECK(strcmp(reason, "testload: fault=unsupported asks to be skipped") == 0);

    /* fault=fail fires on the 3rd step, not before. */
    const char *fail[NP] = { "10", "fail", "step", NULL, NULL, NULL, NULL };
    values_for(d, v, fail);
    CHECK(d->init(&mock_host, &params, &state) == DLB_OK);
    CHECK(d->workload->setup(state, &mock_host, &info, &wl) == DLB_OK);
    CHECK(d->workload->step(wl) == DLB_OK);
    CHECK(d->workload->step(wl) == DLB_OK);
    CHECK(d->workload->step(wl) == DLB_ERR_RUNTIME);
    d->workload->teardown(wl);
    d->fini(state);

    /* fault=oom at setup: takes memory until the host refuses, then
     * reports NOMEM with everything given back. */
    const char *oom[NP] = { "10", "oom", "setup", NULL, NULL, NULL, NULL };
    values_for(d, v, oom);
    alloc_budget = (size_t)200 << 20;
    alloc_live = 0;
    CHECK(d->init(&mock_host, &params, &state) == DLB_OK);
    CHECK(d->workload->setup(state, &mock_host, &info, &wl) == DLB_ERR_NOMEM);
    CHECK(alloc_live == 0);
    d->fini(state);
    alloc_budget = (size_t)-1;

    dlb_registry_free(&r);
}

/* ---- faulty plugins: one line each, naming the plugin ----------------- */

/* The version this dlbench reports, whatever minor it is at. */
#define REG_STR_(x) #x
#define REG_STR(x) REG_STR_(x)

static void test_faulty_plugins_refused(void)
{
    static const struct {
        const char *name, *phrase;
    } cases[] = {
        { "abi_major", "plugin abi_major (" },
        { "abi_major", "was built for plugin ABI 99.0; this dlbench speaks "
                       REG_STR(DLB_PLUGIN_ABI_MAJOR) "."
                       REG_STR(DLB_PLUGIN_ABI_MINOR) ": "
                       "rebuild it against dlbench "
                       REG_STR(DLB_PLUGIN_ABI_MAJOR) "."
                       REG_STR(DLB_PLUGIN_ABI_MINOR) "'s headers" },
        { "abi_1x", "plugin abi_1x (" },
        { "abi_1x", "was built for plugin ABI 1.7; this dlbench speaks "
                    REG_STR(DLB_PLUGIN_ABI_MAJOR) "."
                    REG_STR(DLB_PLUGIN_ABI_MINOR) ": rebuild it against "
                    "dlbench " REG_STR(DLB_PLUGIN_ABI_MAJOR) "."
                    REG_STR(DLB_PLUGIN_ABI_MINOR) "'s headers" },
        { "no_entry", "no symbol dlb_plugin_entry; is it a dlbench plugin?" },
        { "wrong_name", "the descriptor is named \"right_name\"" },
        { "short_desc", "short descriptor" },
        { "no_init", "sets the transform hook point but has no init" },
    };
    const char *dirs[] = { plugin_dir };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dlb_error err = { "" };
        dlb_status st = load_from(dirs, 1, cases[i].name, &err);
        CHECK(st == DLB_ERR_PLUGIN);
        char who[64];
        snprintf(who, sizeof who, "plugin %s ", cases[i].name);
        CHECK(contains(err.msg, who));
        CHECK(contains(err.msg, cases[i].phrase));
        CHECK(strchr(err.msg, '\n') == NULL);
    }
}

static void test_missing_plugin_lists_dirs(void)
{
    const char *dirs[] = { plugin_dir, "/nonexistent/dlbench-plugins" };
    struct dlb_error err = { "" };
    CHECK(load_from(dirs, 2, "nosuch", &err) == DLB_ERR_INPUT);
    CHECK(contains(err.msg, "unknown plugin 'nosuch'"));
    CHECK(contains(err.msg, "nosuch.so"));
    CHECK(contains(err.msg, plugin_dir));
    CHECK(contains(err.msg, "/nonexistent/dlbench-plugins"));

    /* A name is never a path. */
    CHECK(load_from(dirs, 1, "../null", &err) == DLB_ERR_INPUT);
}

static void test_search_path_order(void)
{
    /* --plugin-dir first, then $DLBENCH_PLUGIN_PATH (empty entries
     * ignored), then the installed directory. */
    setenv("DLBENCH_PLUGIN_PATH", "/a::/b/", 1);
    struct dlb_registry r;
    const char *extra[] = { "/x" };
    CHECK(dlb_registry_init(&r, extra, 1, "/inst", NULL) == DLB_OK);
    CHECK(r.n_dirs == 4);
    if (r.n_dirs == 4) {
        CHECK(strcmp(r.dirs[0], "/x") == 0);
        CHECK(strcmp(r.dirs[1], "/a") == 0);
        CHECK(strcmp(r.dirs[2], "/b") == 0);
        CHECK(strcmp(r.dirs[3], "/inst") == 0);
    }
    dlb_registry_free(&r);
    unsetenv("DLBENCH_PLUGIN_PATH");
}

/* ---- file safety -------------------------------------------------------- */

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    int ok = in && out;
    char buf[8192];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        ok = 0;
    return ok;
}

struct scan_seen {
    int n, testload_ok, abi_refused, link_refused, sorted;
    char last[64];
    char testload_path[600];
};

static void scan_visit(void *ctx, const char *name, const char *path,
                       const struct dlb_loaded_plugin *p, dlb_status st,
                       const char *why)
{
    struct scan_seen *s = ctx;
    if (s->n && strcmp(s->last, name) >= 0)
        s->sorted = 0;
    snprintf(s->last, sizeof s->last, "%s", name);
    s->n++;
    if (strcmp(name, "testload") == 0) {
        s->testload_ok = st == DLB_OK && p && p->desc;
        snprintf(s->testload_path, sizeof s->testload_path, "%s", path);
    }
    if (strcmp(name, "abi_major") == 0)
        s->abi_refused = st == DLB_ERR_PLUGIN && !p && strstr(why, "99.0");
    if (strcmp(name, "link") == 0)
        s->link_refused = st == DLB_ERR_PLUGIN &&
                          strstr(why, "symbolic link") != NULL;
}

static void test_unsafe_files_refused(void)
{
    const char *tmp = getenv("TMPDIR");
    char dir[512], file[600], link[600], src[600];
    snprintf(dir, sizeof dir, "%s/dlb-registry-XXXXXX",
             tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp failed");
        return;
    }
    /* testload.so: built with the tests, so always there. */
    snprintf(file, sizeof file, "%s/testload.so", dir);
    snprintf(link, sizeof link, "%s/link.so", dir);
    snprintf(src, sizeof src, "%s/testload.so", plugin_dir);
    CHECK(copy_file(src, file));
    const char *dirs[] = { dir, plugin_dir };
    struct dlb_error err = { "" };

    CHECK(chmod(dir, 0755) == 0 && chmod(file, 0644) == 0);
    CHECK(load_from(dirs, 1, "testload", &err) == DLB_OK);

    /* world-writable file */
    CHECK(chmod(file, 0646) == 0);
    CHECK(load_from(dirs, 1, "testload", &err) == DLB_ERR_PLUGIN);
    CHECK(contains(err.msg, "plugin testload"));
    CHECK(contains(err.msg, "world-writable"));
    char fix[700];
    snprintf(fix, sizeof fix, "chmod o-w %s`", file);
    CHECK(contains(err.msg, fix));
    /* A refusal ends the search: the good copy later in the path does not
     * silently stand in for it. */
    CHECK(load_from(dirs, 2, "testload", &err) == DLB_ERR_PLUGIN);

    /* world-writable directory */
    CHECK(chmod(file, 0644) == 0 && chmod(dir, 0757) == 0);
    CHECK(load_from(dirs, 1, "testload", &err) == DLB_ERR_PLUGIN);
    CHECK(contains(err.msg, "plugin testload"));
    char which[700];
    snprintf(which, sizeof which, "its directory %s is world-writable", dir);
    CHECK(contains(err.msg, which));
    snprintf(fix, sizeof fix, "chmod o-w %s`", dir);
    CHECK(contains(err.msg, fix));
    CHECK(chmod(dir, 0700) == 0);

    /* symlink */
    CHECK(symlink(src, link) == 0);
    CHECK(load_from(dirs, 1, "link", &err) == DLB_ERR_PLUGIN);
    CHECK(contains(err.msg, "plugin link"));
    CHECK(contains(err.msg, "symbolic link"));

    /* not a shared object: said so, without dlopen's "invalid ELF header"
     * and a misleading ldd hint */
    char junk[600];
    snprintf(junk, sizeof junk, "%s/junk.so", dir);
    FILE *f = fopen(junk, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("not a shared object\n", f);
        fclose(f);
    }
    CHECK(chmod(junk, 0644) == 0);
    CHECK(load_from(dirs, 1, "junk", &err) == DLB_ERR_PLUGIN);
    char refusal[1400];
    snprintf(refusal, sizeof refusal, "plugin junk: refusing %s: it is not a "
             "shared object (no ELF header); rebuild the plugin or remove the "
             "file", junk);
    CHECK(contains(err.msg, refusal));
    CHECK(!contains(err.msg, "ldd"));

    /* scan: every NAME.so once, sorted, the first directory's copy wins,
     * refusals reported with their reason. */
    struct dlb_registry r;
    const char *scan_dirs[] = { dir, all_dirs[0], all_dirs[1] };
    CHECK(dlb_registry_init(&r, scan_dirs, 1 + n_all_dirs, NULL, &err) ==
          DLB_OK);
    struct scan_seen seen = { .sorted = 1 };
    dlb_registry_scan(&r, scan_visit, &seen);
    /* junk, link, testload (once) and the 5 faulty plugins at least */
    CHECK(seen.n >= 8);
    CHECK(seen.sorted);
    CHECK(seen.testload_ok);
    CHECK(strcmp(seen.testload_path, file) == 0);
    CHECK(seen.abi_refused);
    CHECK(seen.link_refused);
    dlb_registry_free(&r);

    unlink(junk);
    unlink(link);
    unlink(file);
    rmdir(dir);
}

/* ---- dlb_plugin_validate on descriptors made here ----------------------- */

static dlb_status noop_init(const struct dlb_host *h,
                            const struct dlb_params *p, void **state)
{
    (void)h;
    (void)p;
    *state = NULL;
    return DLB_OK;
}

static void *noop_alloc(void *s, const struct dlb_host *h, size_t b)
{
    (void)s;
    (void)h;
    (void)b;
    return NULL;
}

static dlb_status noop_open(void *state, const struct dlb_host *h,
                            const struct dlb_dataset *data,
                            const struct dlb_batch_spec *spec, void **src)
{
    (void)state;
    (void)h;
    (void)data;
    (void)spec;
    (void)src;
    return DLB_OK;
}

static void noop_close(void *src)
{
    (void)src;
}

static dlb_status noop_setup(void *state, const struct dlb_host *h,
                             struct dlb_workload_info *info, void **wl)
{
    (void)state;
    (void)h;
    (void)info;
    (void)wl;
    return DLB_OK;
}

static void expect_refusal(const struct dlb_plugin *d, const char *phrase)
{
    struct dlb_error err = { "" };
    CHECK(dlb_plugin_validate(d, "x", "/p/x.so", &err) == DLB_ERR_PLUGIN);
    CHECK(contains(err.msg, "plugin x (/p/x.so)"));
    CHECK(contains(err.msg, phrase));
}

static void test_validate_hooks_and_tables(void)
{
    const struct dlb_plugin base = {
        .abi_major = DLB_PLUGIN_ABI_MAJOR,
        .abi_minor = DLB_PLUGIN_ABI_MINOR,
        .struct_size = sizeof(struct dlb_plugin),
        .name = "x", .version = "1", .summary = "s",
    };
    struct dlb_error err = { "" };
    CHECK(dlb_plugin_validate(&base, "x", "/p/x.so", &err) == DLB_OK);
    expect_refusal(NULL, "returned NULL");

    /* A newer minor version with a longer descriptor still loads. */
    struct dlb_plugin d = base;
    d.abi_minor = DLB_PLUGIN_ABI_MINOR + 1;
    d.struct_size = sizeof(struct dlb_plugin) + 16;
    CHECK(dlb_plugin_validate(&d, "x", "/p/x.so", &err) == DLB_OK);

    /* Shorter than ABI 1.0's descriptor (later minors only append). */
    d = base;
    d.struct_size = offsetof(struct dlb_plugin, metrics);
    expect_refusal(&d, "short descriptor");
    d = base;
    d.version = NULL;
    expect_refusal(&d, "has no version");

    struct dlb_allocator_hooks alloc = { .alloc = noop_alloc };
    d = base;
    d.init = noop_init;
    d.allocator = &alloc;
    expect_refusal(&d, "the allocator hook point has no free");

    struct dlb_batch_source_hooks src = { .open = noop_open,
                                          .close = noop_close };
    d = base;
    d.init = noop_init;
    d.batch_source = &src;
    expect_refusal(&d, "the batch_source hook point has no next");

    struct dlb_workload_hooks wl = { .setup = noop_setup,
                                     .teardown = noop_close };
    d = base;
    d.init = noop_init;
    d.workload = &wl;
    expect_refusal(&d, "the workload hook point has no step");
    d.init = NULL;
    expect_refusal(&d, "sets the workload hook point but has no init");

    /* The table check itself lives in param.c; the registry must call it
     * and refuse on its verdict. */
    const struct dlb_param_def no_choices[] = {
        { .name = "mode", .type = DLB_PARAM_ENUM, .def = "a", .help = "h" },
    };
    d = base;
    d.params = no_choices;
    d.n_params = 1;
    expect_refusal(&d, "bad parameter table");
    d.params = NULL;
    expect_refusal(&d, "bad parameter table");

    const struct dlb_param_def reserved[] = {
        { .name = "enable", .type = DLB_PARAM_BOOL, .def = "on", .help = "h" },
    };
    d.params = reserved;
    expect_refusal(&d, "\"enable\" is reserved");
}

int main(void)
{
    plugin_dir = getenv("DLB_TEST_PLUGIN_DIR");
    if (!plugin_dir || !plugin_dir[0]) {
        fprintf(stderr, "DLB_TEST_PLUGIN_DIR is not set: skipping\n");
        return 77;
    }
    all_dirs[n_all_dirs++] = plugin_dir;
    const char *shipped = getenv("DLB_PLUGIN_DIR");
    if (shipped && shipped[0] && strcmp(shipped, plugin_dir) != 0)
        all_dirs[n_all_dirs++] = shipped;
    /* The user's own plugin path must not change what the tests load. */
    unsetenv("DLBENCH_PLUGIN_PATH");

    test_null_is_the_baseline();
    test_skeleton_hooks_work();
    test_testload_faults();
    test_faulty_plugins_refused();
    test_missing_plugin_lists_dirs();
    test_search_path_order();
    test_unsafe_files_refused();
    test_validate_hooks_and_tables();
    return check_exit();
}
