/* The models lent to plugins (core/services/model_lend.c), without a host:
 *   - precisions by name: fp32, bf16, fp16, nothing else;
 *   - a clone lives on the backend asked for (else the configuration's),
 *     starts from the seed as model_api.h says (the weights and
 *     statistics of a fresh model bit for bit, not its trained source's:
 *     a plugin copies those with state_io), is no
 *     named model, and is closed by release once (a second release and a
 *     NULL one are left alone); with no backend at all, DLB_ERR_INTERNAL
 *     and no model;
 *   - slot k pins the calling thread to the k-th share of the CPUs given;
 *   - a named model is the one the workload built (on its own backend it
 *     is not moved), held until released or closed with the rest; a move
 *     that fails gives its status, closes the model and holds nothing.
 * Expected: all hold. Bugs they guard against: a clone on the wrong
 * backend or not from the seed, a release that closes twice or closes a
 * model it does not hold, a failed open leaving an entry behind, a slot
 * pinned to another slot's CPUs. */
#include "check.h"
#include "plugin_fixture.h"

#include <sched.h>

#include "services/model_lend.h"
#include "services/model_replica.h"

static void test_precisions(void)
{
    CHECK(dlb_model_lend_precision_find("fp32") == 0);
    CHECK(dlb_model_lend_precision_find("bf16") == 1);
    CHECK(dlb_model_lend_precision_find("fp16") == 2);
    CHECK(dlb_model_lend_precision_find("fp8") == -1);
    CHECK(dlb_model_lend_precision_find("") == -1);
}

static int same_state(struct dlb_model *a, struct dlb_model *b)
{
    unsigned parts = DLB_STATE_WEIGHTS | DLB_STATE_STATS;
    size_t n = dlb_model_state_count(a, parts);
    struct dlb_error err = {""};
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    int same = x && y && n > 0 && dlb_model_state_count(b, parts) == n &&
               dlb_model_state_io(a, parts, x, n, 0, &err) == DLB_OK &&
               dlb_model_state_io(b, parts, y, n, 0, &err) == DLB_OK &&
               !memcmp(x, y, n * sizeof *x);
    free(x);
    free(y);
    return same;
}

static void test_clone(struct dlb_model *src, struct dlb_model *fresh)
{
    struct dlb_model_lend_registry reg = {NULL};
    struct dlb_model_lend_how how = {NULL, 1, -1, NULL, "ref", -1, SEED};
    struct dlb_model *c = NULL, *none = NULL;
    struct dlb_error err = {""};
    CHECK(dlb_model_lend_clone(src, &how, &c, &err) == DLB_OK && c);
    if (c) {
        CHECK(c != src);
        CHECK(!strcmp(dlb_backend_name(dlb_model_backend(c)), "ref"));
        CHECK(dlb_model_backend(c) != dlb_model_backend(src));
        CHECK(same_state(c, fresh) && !same_state(c, src));
        CHECK(!dlb_model_lend_holds(&reg, c));
        dlb_model_lend_release(&reg, c);
        dlb_model_lend_release(&reg, c); /* not held any more: nothing */
    }
    dlb_model_lend_release(&reg, NULL);
    how.home = NULL;
    CHECK(dlb_model_lend_clone(src, &how, &none, &err) == DLB_ERR_INTERNAL);
    CHECK(none == NULL && strstr(err.msg, "no backend"));
    how.home = "cpu";
    how.backend = "ref"; /* the plugin's choice wins */
    CHECK(dlb_model_lend_clone(src, &how, &c, &err) == DLB_OK && c);
    if (c)
        CHECK(!strcmp(dlb_backend_name(dlb_model_backend(c)), "ref"));
    dlb_model_lend_release(&reg, c);
}

/* The CPUs this thread may use, as ids in order. */
static int cpu_ids(cpu_set_t *set, int *ids)
{
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, set))
            ids[n++] = c;
    return n;
}

static void test_pinning(struct dlb_model *src)
{
    struct dlb_model_lend_registry reg = {NULL};
    cpu_set_t start, now;
    int ids[CPU_SETSIZE], n;
    CHECK(sched_getaffinity(0, sizeof start, &start) == 0);
    n = cpu_ids(&start, ids);
    for (int slot = 0; n > 0 && slot < 3; slot++) {
        struct dlb_model_lend_how how = {&start, 1, slot, NULL, "ref", -1,
                                         SEED};
        struct dlb_model *c = NULL;
        struct dlb_error err = {""};
        CHECK(dlb_model_lend_clone(src, &how, &c, &err) == DLB_OK);
        CHECK(sched_getaffinity(0, sizeof now, &now) == 0);
        CHECK(CPU_COUNT(&now) == 1 && CPU_ISSET(ids[slot % n], &now));
        dlb_model_lend_release(&reg, c);
    }
    sched_setaffinity(0, sizeof start, &start);
}

/* The tiny network on be, as a workload builds it: its spec and model. */
static struct dlb_model *build(struct dlb_backend *be,
                               struct dlb_model_spec **spec)
{
    struct dlb_model *m = NULL;
    struct dlb_error err = {""};
    *spec = spec_load("tests/unit/models/tiny.ini");
    if (*spec && dlb_model_create(*spec, be, DLB_F32, SEED, &m, &err) != DLB_OK)
        fprintf(stderr, "%s\n", err.msg);
    return m;
}

static void test_named(void)
{
    struct dlb_backend_config cfg = {.threads = 1, .seed = SEED};
    struct dlb_backend *be = NULL;
    struct dlb_model_lend_registry reg = {NULL};
    struct dlb_model_lend_how how = {NULL, 1, -1, NULL, "ref", -1, SEED};
    struct dlb_model_spec *spec = NULL;
    struct dlb_model *b1, *b2, *b3, *m1 = NULL, *m2 = NULL, *bad = NULL;
    struct dlb_error err = {""};
    char why[256];
    CHECK(dlb_backend_open("ref", &cfg, &be, why, sizeof why) == DLB_OK);
    b1 = build(be, &spec);
    CHECK(b1 && dlb_model_lend_named(&reg, "tiny", spec, b1, &how, &m1,
                                     &err) == DLB_OK);
    CHECK(m1 == b1 && dlb_model_lend_holds(&reg, m1)); /* not moved */
    how.backend = "ref"; /* the backend it is on already: still not moved */
    b2 = build(be, &spec);
    CHECK(b2 && dlb_model_lend_named(&reg, "tiny", spec, b2, &how, &m2,
                                     &err) == DLB_OK);
    CHECK(m2 == b2 && dlb_model_backend(m2) == be);
    dlb_model_lend_release(&reg, m1);
    CHECK(!dlb_model_lend_holds(&reg, m1) && dlb_model_lend_holds(&reg, m2));
    /* A move that fails: its status comes back, the model is closed (the
     * sanitizers' leak check) and nothing is held. */
    how.backend = "nonesuch";
    b3 = build(be, &spec);
    CHECK(b3 && dlb_model_lend_named(&reg, "tiny", spec, b3, &how, &bad,
                                     &err) != DLB_OK);
    CHECK(bad == NULL && strstr(err.msg, "nonesuch"));
    CHECK(!dlb_model_lend_holds(&reg, b3) && dlb_model_lend_holds(&reg, m2));
    dlb_model_lend_close_all(&reg);
    CHECK(reg.head == NULL);
    dlb_backend_close(be);
}

int main(void)
{
    struct env e;
    env_open(&e, "test");
    e.backend = "ref";
    struct dlb_model_spec *spec = spec_load("tests/unit/models/tiny.ini");
    struct dlb_model *src = spec ? model_open(&e, spec) : NULL;
    struct dlb_model *fresh = spec ? model_open(&e, spec) : NULL;
    CHECK(src != NULL && fresh != NULL);
    if (src) { /* one step: weights and statistics no seed gives */
        enum { N = 4 };
        float img[N * 2 * 8 * 8];
        int32_t labels[N];
        struct dlb_batch b;
        struct dlb_error err = {""};
        make_batch(spec, 1, N, img, labels, &b);
        CHECK(dlb_model_forward_backward(src, img, labels, N, 1.0f, NULL,
                                         &err) == DLB_OK &&
              dlb_model_sgd_step(src, &err) == DLB_OK);
    }
    test_precisions();
    if (src && fresh) {
        test_clone(src, fresh);
        test_pinning(src);
    }
    test_named();
    model_close(src);
    model_close(fresh);
    dlb_model_spec_free(spec);
    env_close(&e);
    return check_exit();
}
