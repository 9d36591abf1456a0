/* The plan: product size and order (first axis slowest), indexes before
 * filters, ids, skip/only, --set overrides and axis collapse, [quick], and
 * the error for a plan that filters leave empty. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fake_plugins.h"
#include "suite/param.h"
#include "plan/plan.h"
#include "plan/plan_workloads.h"
#include "child/workloads.h"
#include "suite/suite.h"

static const char *suite_path(const char *name)
{
    static char buf[4096];
    const char *srcdir = getenv("srcdir");
    snprintf(buf, sizeof buf, "%s/tests/unit/suites/%s",
             srcdir && *srcdir ? srcdir : ".", name);
    return buf;
}

static int load(const char *name, struct dlb_suite *s)
{
    struct dlb_error err = {""};
    if (dlb_suite_load(suite_path(name), fake_lookup, NULL, s, &err) != DLB_OK) {
        fprintf(stderr, "  %s\n", err.msg);
        return 0;
    }
    return 1;
}

/* Build with the given --set options; returns the status, plan in *p. */
static dlb_status build(const struct dlb_suite *s, int quick, char **sets,
                        size_t n_sets, struct dlb_plan *p, struct dlb_error *err)
{
    struct dlb_overrides ov = {sets, n_sets, quick};
    err->msg[0] = '\0';
    return dlb_plan_build(s, &ov, p, err);
}

/* The ids and indexes of the plan as "0:id|3:id|...". */
static int plan_is(const struct dlb_plan *p, const char *want)
{
    char got[2048] = "";
    for (size_t k = 0; k < p->n; k++) {
        size_t used = strlen(got);
        snprintf(got + used, sizeof got - used, "%s%zu:%s", k ? "|" : "",
                 p->configs[k].index, p->configs[k].id);
    }
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "  plan \"%s\"\n  want \"%s\"\n", got, want);
        return 0;
    }
    return 1;
}

static void test_sweep(void)
{
    struct dlb_suite s;
    struct dlb_plan p;
    struct dlb_error err;
    if (!load("good-sweep.ini", &s))
        return;
    CHECK(build(&s, 0, NULL, 0, &p, &err) == DLB_OK);
    /* 3 x 3 = 9; the two skip lines drop (32, not fp32) and (128, half). */
    CHECK(p.n == 5 && p.n_filtered == 4);
    CHECK(plan_is(&p, "0:batch=32 amp.precision=fp32|"
                      "3:batch=64 amp.precision=fp32|"
                      "4:batch=64 amp.precision=bf16|"
                      "5:batch=64 amp.precision=fp16|"
                      "6:batch=128 amp.precision=fp32"));
    const struct dlb_config *c = &p.configs[2];
    CHECK(c->core.batch == 64);
    CHECK(c->core.backend == DLB_BACKEND_REF);
    CHECK(c->core.train_steps == 100);
    CHECK(c->core.seed == 42);                            /* a default */
    CHECK_NEAR(c->core.warmup_s, 0.2, 1e-12);
    CHECK(!strcmp(c->values[0][DLB_KEY_backend].s, "ref"));
    CHECK(c->values[1][0].i == 1 && !strcmp(c->values[1][0].s, "bf16"));
    CHECK(c->values[1][1].f == 1024.0);                   /* [amp] */
    CHECK(c->values[1][2].i == 2000);                     /* plugin default */
    CHECK(dlb_config_plugin_enabled(&p, c, 1) == 1);
    CHECK(dlb_config_plugin_enabled(&p, c, 0) == 1);
    CHECK(dlb_config_plugin_enabled(&p, c, 7) == 0);
    dlb_plan_free(&p);

    /* --set on an axis collapses it; on a fixed key replaces the value. */
    char *sets[] = {"batch=64", "amp.init_scale=2", "seed=5"};
    CHECK(build(&s, 0, sets, 3, &p, &err) == DLB_OK);
    CHECK(p.n == 3 && p.n_filtered == 0);
    CHECK(plan_is(&p, "0:batch=64 amp.precision=fp32|"
                      "1:batch=64 amp.precision=bf16|"
                      "2:batch=64 amp.precision=fp16"));
    CHECK(p.n && p.configs[0].values[1][1].f == 2.0);
    CHECK(p.n && p.configs[0].core.seed == 5);
    dlb_plan_free(&p);

    /* A later --set of the same key wins; values are canonical in ids. */
    char *twice[] = {"batch=64", "batch=+128", "amp.precision=FP32"};
    CHECK(build(&s, 0, twice, 3, &p, &err) == DLB_OK);
    CHECK(plan_is(&p, "0:batch=128 amp.precision=fp32"));
    dlb_plan_free(&p);

    /* --quick: [quick] batch collapses the axis, its list replaces the
     * precision axis, train_steps is overridden. */
    CHECK(build(&s, 1, NULL, 0, &p, &err) == DLB_OK);
    CHECK(plan_is(&p, "0:batch=32 amp.precision=fp32"));
    CHECK(p.n_filtered == 1);
    CHECK(p.n && p.configs[0].core.train_steps == 10);
    dlb_plan_free(&p);

    /* --set applies after [quick]. */
    char *after[] = {"batch=128"};
    CHECK(build(&s, 1, after, 1, &p, &err) == DLB_OK);
    CHECK(plan_is(&p, "0:batch=128 amp.precision=fp32"));
    dlb_plan_free(&p);
    dlb_suite_free(&s);
}

static int set_fails(const struct dlb_suite *s, char *set, const char *want)
{
    struct dlb_plan p;
    struct dlb_error err;
    char *sets[] = {set};
    dlb_status st = build(s, 0, sets, 1, &p, &err);
    if (st == DLB_OK) {
        dlb_plan_free(&p);
        fprintf(stderr, "  --set %s accepted\n", set);
        return 0;
    }
    if (st != DLB_ERR_INPUT || strcmp(err.msg, want) != 0) {
        fprintf(stderr, "  --set %s: %s \"%s\"\n  want \"%s\"\n", set,
                dlb_status_name(st), err.msg, want);
        return 0;
    }
    return p.configs == NULL && p.n == 0;
}

static void test_set_errors(void)
{
    struct dlb_suite s;
    if (!load("good-sweep.ini", &s))
        return;
    CHECK(set_fails(&s, "batch=abc", "--set batch=abc: expected an integer "
                    "between 1 and 1048576, got \"abc\""));
    CHECK(set_fails(&s, "bacth=64", "--set bacth=64: unknown key 'bacth' "
                    "(did you mean 'batch'?)"));
    CHECK(set_fails(&s, "batch", "--set batch: expected KEY=VALUE, as in "
                    "--set batch=128"));
    CHECK(set_fails(&s, "amp.precision=fp8", "--set amp.precision=fp8: "
                    "expected one of fp32, bf16, fp16, got \"fp8\""));
    CHECK(set_fails(&s, "quant.bits=8", "--set quant.bits=8: unknown key "
                    "'quant.bits': no plugin 'quant' in this suite; a "
                    "plugin's keys need its [quant] section, a sweep axis or "
                    "`plugins = quant`"));
    CHECK(set_fails(&s, "min_samples=500000", "suite 'good-sweep', "
                    "configuration 'batch=32 amp.precision=fp32': min_samples "
                    "(500000) is greater than max_samples (100000)"));
    dlb_suite_free(&s);
}

static void test_enable_and_quick_axis(void)
{
    struct dlb_suite s;
    struct dlb_plan p;
    struct dlb_error err;
    if (!load("good-enable.ini", &s))
        return;
    CHECK(build(&s, 0, NULL, 0, &p, &err) == DLB_OK);
    CHECK(plan_is(&p, "0:amp.enable=off batch=16|1:amp.enable=off batch=32|"
                      "2:amp.enable=on batch=16|3:amp.enable=on batch=32"));
    CHECK(p.n == 4 && !dlb_config_plugin_enabled(&p, &p.configs[1], 1));
    CHECK(p.n == 4 && dlb_config_plugin_enabled(&p, &p.configs[2], 1));
    dlb_plan_free(&p);
    /* Under --quick the [quick] list adds a third axis, varying fastest. */
    CHECK(build(&s, 1, NULL, 0, &p, &err) == DLB_OK);
    CHECK(p.n == 8);
    CHECK(p.n == 8 && !strcmp(p.configs[1].id,
                              "amp.enable=off batch=16 seed=2"));
    dlb_plan_free(&p);
    dlb_suite_free(&s);
}

static void test_default_and_empty(void)
{
    struct dlb_suite s;
    struct dlb_plan p;
    struct dlb_error err;
    if (load("good-basic.ini", &s)) {
        CHECK(build(&s, 1, NULL, 0, &p, &err) == DLB_OK);
        CHECK(plan_is(&p, "0:default"));
        CHECK(p.n && p.configs[0].core.batch == 128);
        CHECK(p.n && p.configs[0].core.memory_limit == 2147483648LL);
        CHECK(p.n && p.configs[0].core.mode == DLB_MODE_INFER);
        dlb_plan_free(&p);
        /* A NULL overrides pointer means none. */
        CHECK(dlb_plan_build(&s, NULL, &p, &err) == DLB_OK && p.n == 1);
        dlb_plan_free(&p);
        dlb_suite_free(&s);
    }
    if (load("good-empty-plan.ini", &s)) {
        CHECK(build(&s, 0, NULL, 0, &p, &err) == DLB_ERR_INPUT);
        CHECK(!strcmp(err.msg, "suite 'good-empty-plan': skip/only filters "
                      "exclude all 2 configurations; nothing to run"));
        CHECK(p.n == 0 && p.configs == NULL);
        /* Collapsing the axis does not escape the filter either. */
        char *sets[] = {"batch=64"};
        CHECK(build(&s, 0, sets, 1, &p, &err) == DLB_ERR_INPUT);
        char *other[] = {"batch=128"};
        CHECK(build(&s, 0, other, 1, &p, &err) == DLB_OK && p.n == 1);
        dlb_plan_free(&p);
        dlb_suite_free(&s);
    }
}

/* The parent checks names against the plan's list, the child runs the
 * hooks workloads.c maps them to: every name must have hooks. */
/* Each field of a configuration's settings holds what its key's table
 * entry parsed to: the one list generates the fields, the key indices
 * and the table, and this checks the fill between them, key by key. */
#define SAME_INT(x, v) ((x) == (v)->i)
#define SAME_SIZE(x, v) ((x) == (v)->i)
#define SAME_FLOAT(x, v) ((x) == (v)->f)
#define SAME_TIME(x, v) ((x) == (v)->f)
#define SAME_BOOL(x, v) ((x) == ((v)->i != 0))
#define SAME_ENUM(x, v) ((int64_t)(x) == (v)->i)
#define SAME_STRING(x, v) ((x) == (v)->s && (x) != NULL)

static int settings_match(const struct dlb_plan *p, const struct dlb_config *c)
{
    const struct dlb_core_settings *t = &c->core;
    const struct dlb_value *v = c->values[0];
    int ok = 1;
    CHECK(p->suite->ns[0].n == DLB_CORE_N_KEYS);
#define DLB_CORE_KEY(field, key, type, ...)                                   \
    if (strcmp(p->suite->ns[0].defs[DLB_KEY_##field].name, key) ||            \
        !SAME_##type(t->field, &v[DLB_KEY_##field])) {                         \
        fprintf(stderr, "  %s: the field %s is not the key's value %s\n",     \
                key, #field, v[DLB_KEY_##field].s);                           \
        ok = 0;                                                               \
    }
#include "suite/suite_keys.def"
#undef DLB_CORE_KEY
    return ok;
}

static void test_typed_settings(void)
{
    struct dlb_suite s;
    struct dlb_plan p;
    struct dlb_error err;
    if (!load("good-sweep.ini", &s))
        return;
    /* every enum key off its default, and keys of every type */
    char *sets[] = {"mode=infer",         "dataset=synthetic",
                    "malloc=fresh",       "objective=latency",
                    "augment=on",         "search=halving",
                    "lr=0.5",             "memory_limit=3G",
                    "time_cap=250ms",     "workload_axes=batch",
                    "accuracy_seeds=3",   "cudnn.algo=heuristic"};
    CHECK(build(&s, 0, sets, sizeof sets / sizeof sets[0], &p, &err) == DLB_OK);
    if (err.msg[0])
        fprintf(stderr, "  %s\n", err.msg);
    for (size_t k = 0; k < p.n; k++)
        CHECK(settings_match(&p, &p.configs[k]));
    CHECK(p.n == 5);
    const struct dlb_core_settings *t = p.n ? &p.configs[p.n - 1].core : NULL;
    if (t) {
        CHECK(t->mode == DLB_MODE_INFER && t->dataset == DLB_DATA_SYNTHETIC);
        CHECK(t->malloc_policy == DLB_MALLOC_FRESH);
        CHECK(t->objective == DLB_OBJ_LATENCY && t->backend == DLB_BACKEND_REF);
        CHECK(t->augment && !t->measure_only);
        CHECK(!strcmp(t->search, "halving") && !strcmp(t->workload_axes, "batch"));
        CHECK(t->lr == 0.5 && t->memory_limit == 3LL << 30);
        CHECK_NEAR(t->time_cap_s, 0.25, 1e-12);
        CHECK(t->accuracy_seeds == 3 && t->batch == 128);
        CHECK(!strcmp(dlb_mode_names[t->mode], "infer"));
        CHECK(!strcmp(dlb_malloc_policy_names[t->malloc_policy], "fresh"));
    }
    dlb_plan_free(&p);
    dlb_suite_free(&s);
    /* train_samples sets train_steps after the configurations are made:
     * the field follows */
    if (!load("good-basic.ini", &s))
        return;
    char *budget[] = {"mode=train", "train_samples=1000", "batch=64"};
    CHECK(build(&s, 0, budget, 3, &p, &err) == DLB_OK);
    CHECK(p.n == 1 && p.configs[0].core.train_steps == 16);
    CHECK(p.n == 1 && settings_match(&p, &p.configs[0]));
    dlb_plan_free(&p);
    dlb_suite_free(&s);
}

static void test_builtin_workloads(void)
{
    size_t n = 0;
    for (; dlb_builtin_workload_names[n]; n++) {
        CHECK(dlb_is_builtin_workload(dlb_builtin_workload_names[n]));
        CHECK(dlb_builtin_workload(dlb_builtin_workload_names[n]) != NULL);
    }
    CHECK(n >= 1);
    CHECK(dlb_is_builtin_workload("cnn"));
    CHECK(!dlb_is_builtin_workload("testload"));
    CHECK(dlb_builtin_workload("testload") == NULL);
}

int main(void)
{
    test_builtin_workloads();
    test_sweep();
    test_set_errors();
    test_enable_and_quick_axis();
    test_default_and_empty();
    test_typed_settings();
    return check_exit();
}
