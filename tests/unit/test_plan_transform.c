/* dlb_plan_check_transforms (core/plan/plan_transform.c), through the plan
 * builder with a fake transform plugin: a configuration with a transform
 * on, mode = train and train_steps = 0 (no trained weights, training
 * disabled) fails when the plan is built, naming the suite line that set
 * train_steps (or mode); the same suite with the plugin off, in mode =
 * infer or with training steps is accepted. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dlbench/plugin.h>
#include "plan/plan.h"
#include "suite/suite.h"

static dlb_status fake_apply(void *state, const struct dlb_host *h,
                             struct dlb_model *m)
{
    (void)state, (void)h, (void)m;
    return DLB_OK;
}

static const struct dlb_transform_hooks fake_transform = {fake_apply};

static dlb_status fake_init(const struct dlb_host *h, const struct dlb_params *p,
                            void **state)
{
    (void)h, (void)p;
    *state = NULL;
    return DLB_OK;
}

static const struct dlb_plugin fake_prune = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR, .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin), .name = "prune",
    .version = "1.0", .summary = "fake transform", .init = fake_init,
    .transform = &fake_transform};

static dlb_status lookup(void *ctx, const char *name,
                         const struct dlb_plugin **out, struct dlb_error *err)
{
    (void)ctx;
    if (strcmp(name, "prune") != 0)
        return dlb_errorf(err, DLB_ERR_INPUT, "unknown plugin '%s'", name);
    *out = &fake_prune;
    return DLB_OK;
}

/* Build the plan of suite `text`; the status, and err's message. */
static dlb_status plan_of(const char *text, struct dlb_error *err)
{
    char path[512];
    check_temp_template(path, sizeof path, "dlbench-plan-transform-XXXXXX");
    int fd = mkstemp(path);
    struct dlb_suite s;
    struct dlb_plan p;
    struct dlb_overrides ov = {NULL, 0, 0};
    dlb_status st;
    CHECK(fd >= 0);
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    err->msg[0] = '\0';
    st = dlb_suite_load(path, lookup, NULL, &s, err);
    if (st == DLB_OK) {
        st = dlb_plan_build(&s, &ov, &p, err);
        if (st == DLB_OK)
            dlb_plan_free(&p);
        dlb_suite_free(&s);
    }
    unlink(path);
    return st;
}

int main(void)
{
    struct dlb_error err = {""};
    CHECK(plan_of("[suite]\nmode = train\ntrain_steps = 0\n[prune]\n", &err) ==
          DLB_ERR_INPUT);
    CHECK(strstr(err.msg, ":3: ") != NULL);
    CHECK(strstr(err.msg, "no trained weights") != NULL);
    fprintf(stderr, "%s\n", err.msg);
    /* The default train_steps (0): the mode line is named. */
    CHECK(plan_of("[suite]\nmode = train\n[prune]\n", &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, ":2: ") != NULL);
    /* Only the configuration without steps is at fault: the axis line. */
    CHECK(plan_of("[suite]\nmode = train\n[prune]\n[sweep]\n"
                  "train_steps = 10, 0\n", &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, ":5: ") && strstr(err.msg, "train_steps=0"));
    CHECK(plan_of("[suite]\nmode = train\ntrain_steps = 10\n[prune]\n", &err) ==
          DLB_OK);
    CHECK(plan_of("[suite]\nmode = infer\n[prune]\n", &err) == DLB_OK);
    CHECK(plan_of("[suite]\nmode = train\n[prune]\nenable = off\n", &err) ==
          DLB_OK);
    CHECK(plan_of("[suite]\nmode = train\n[sweep]\nprune.enable = off, on\n",
                  &err) == DLB_ERR_INPUT);
    return check_exit();
}
