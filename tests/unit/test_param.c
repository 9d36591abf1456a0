/* Typed parameters: what suite authors may write for each type, the
 * canonical texts that appear in configuration ids, "did you mean", sweep
 * axis expansion and the checks of plugin parameter tables. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "suite/param.h"

static const char *const precisions[] = {"fp32", "bf16", "fp16", NULL};

static const struct dlb_param_def d_int = {
    "batch", DLB_PARAM_INT, "64", DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, 1,
    4096, NULL, "images", "mini-batch size"};
static const struct dlb_param_def d_int_free = {
    "n", DLB_PARAM_INT, "0", 0, 0, 0, NULL, NULL, "any integer"};
static const struct dlb_param_def d_float = {
    "lr", DLB_PARAM_FLOAT, "0.01", DLB_PARAM_HAS_MIN | DLB_PARAM_MIN_EXCLUSIVE,
    0, 0, NULL, NULL, "learning rate"};
static const struct dlb_param_def d_unit = {
    "momentum", DLB_PARAM_FLOAT, "0.9", DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX,
    0, 1, NULL, NULL, "momentum"};
static const struct dlb_param_def d_bool = {
    "flag", DLB_PARAM_BOOL, "on", 0, 0, 0, NULL, NULL, "a switch"};
static const struct dlb_param_def d_enum = {
    "precision", DLB_PARAM_ENUM, "fp32", 0, 0, 0, precisions, NULL,
    "compute type"};
static const struct dlb_param_def d_size = {
    "pool", DLB_PARAM_SIZE, "0", DLB_PARAM_HAS_MAX, 0, 4294967296.0, NULL,
    "bytes", "pool size"};
static const struct dlb_param_def d_time = {
    "warmup", DLB_PARAM_TIME, "0.2s", DLB_PARAM_HAS_MIN, 0, 0, NULL, "s",
    "warm-up"};
static const struct dlb_param_def d_string = {
    "model", DLB_PARAM_STRING, "lenet", 0, 0, 0, NULL, NULL, "network"};

static char why[512];

/* Parse; on success return the canonical text (static), else NULL. */
static const char *canon(const struct dlb_param_def *d, const char *text,
                         struct dlb_value *out)
{
    static char buf[256];
    struct dlb_value v;
    why[0] = '\0';
    if (dlb_param_parse(d, text, &v, why, sizeof why) != DLB_OK)
        return NULL;
    snprintf(buf, sizeof buf, "%s", v.s);
    if (out) {
        *out = v;
        out->s = NULL;
    }
    dlb_value_clear(&v);
    return buf;
}

static int canon_is(const struct dlb_param_def *d, const char *text,
                    const char *want)
{
    const char *got = canon(d, text, NULL);
    if (!got || strcmp(got, want) != 0) {
        fprintf(stderr, "  %s: \"%s\" gave %s%s%s (%s)\n", d->name, text,
                got ? "\"" : "", got ? got : "an error", got ? "\"" : "", why);
        return 0;
    }
    return 1;
}

/* The parse fails and the message contains `part`. */
static int fails_with(const struct dlb_param_def *d, const char *text,
                      const char *part)
{
    struct dlb_value v;
    why[0] = '\0';
    dlb_status st = dlb_param_parse(d, text, &v, why, sizeof why);
    if (st == DLB_OK) {
        fprintf(stderr, "  %s: \"%s\" was accepted as \"%s\"\n", d->name, text,
                v.s);
        dlb_value_clear(&v);
        return 0;
    }
    if (st != DLB_ERR_INPUT || !strstr(why, part)) {
        fprintf(stderr, "  %s: \"%s\": message \"%s\" lacks \"%s\"\n", d->name,
                text, why, part);
        return 0;
    }
    return 1;
}

static void test_int(void)
{
    struct dlb_value v;
    CHECK(canon_is(&d_int, "64", "64"));
    CHECK(canon_is(&d_int, " +128 ", "128"));
    CHECK(canon(&d_int, "4096", &v) && v.i == 4096);
    CHECK(canon_is(&d_int, "1", "1"));
    CHECK(fails_with(&d_int, "0", "expected an integer between 1 and 4096, "
                     "got \"0\""));
    CHECK(fails_with(&d_int, "4097", "between 1 and 4096"));
    CHECK(fails_with(&d_int, "abc", "expected an integer between 1 and 4096, "
                     "got \"abc\""));
    CHECK(fails_with(&d_int, "1.5", "expected an integer"));
    CHECK(fails_with(&d_int, "", "got \"\""));
    CHECK(fails_with(&d_int_free, "99999999999999999999", "expected an integer"));
    CHECK(canon_is(&d_int_free, "-5", "-5"));
}

static void test_float(void)
{
    struct dlb_value v;
    CHECK(canon(&d_float, "0.01", &v) && v.f == 0.01);
    CHECK(canon_is(&d_float, "1e-3", "0.001"));
    CHECK(canon_is(&d_float, "0.10", "0.1"));
    CHECK(fails_with(&d_float, "0", "expected a number > 0, got \"0\""));
    CHECK(fails_with(&d_float, "nan", "expected a number > 0"));
    CHECK(fails_with(&d_float, "inf", "expected a number"));
    CHECK(fails_with(&d_float, "0x10", "expected a number"));
    CHECK(fails_with(&d_float, "1,5", "expected a number"));
    CHECK(canon_is(&d_unit, "0", "0"));
    CHECK(canon_is(&d_unit, "1", "1"));
    CHECK(fails_with(&d_unit, "1.01", "between 0 and 1"));
}

static void test_bool(void)
{
    static const char *const yes[] = {"on", "true", "yes", "1", "ON", "True"};
    static const char *const no[] = {"off", "false", "no", "0", "OFF"};
    struct dlb_value v;
    for (size_t k = 0; k < sizeof yes / sizeof yes[0]; k++)
        CHECK(canon(&d_bool, yes[k], &v) && v.i == 1 && !strcmp(canon(&d_bool,
              yes[k], NULL), "on"));
    for (size_t k = 0; k < sizeof no / sizeof no[0]; k++)
        CHECK(canon(&d_bool, no[k], &v) && v.i == 0 && !strcmp(canon(&d_bool,
              no[k], NULL), "off"));
    CHECK(fails_with(&d_bool, "maybe", "expected on/off, true/false, yes/no "
                     "or 1/0, got \"maybe\""));
    CHECK(fails_with(&d_bool, "2", "expected on/off"));
}

static void test_enum(void)
{
    struct dlb_value v;
    CHECK(canon(&d_enum, "bf16", &v) && v.i == 1);
    CHECK(canon_is(&d_enum, "FP16", "fp16"));
    CHECK(fails_with(&d_enum, "fp15", "expected one of fp32, bf16, fp16, got "
                     "\"fp15\" (did you mean 'fp16'?)"));
    /* A swap of two letters is one edit. */
    CHECK(fails_with(&d_enum, "bf61", "(did you mean 'bf16'?)"));
    CHECK(fails_with(&d_enum, "int8", "expected one of fp32, bf16, fp16"));
    CHECK(!strstr(why, "did you mean"));
}

static void test_size(void)
{
    struct dlb_value v;
    CHECK(canon(&d_size, "512", &v) && v.i == 512);
    CHECK(canon(&d_size, "4K", &v) && v.i == 4096);
    CHECK(canon(&d_size, "2M", &v) && v.i == 2097152);
    CHECK(canon(&d_size, "1G", &v) && v.i == 1073741824);
    CHECK(canon(&d_size, "2MiB", &v) && v.i == 2097152);
    CHECK(canon(&d_size, "1.5G", &v) && v.i == 1610612736);
    CHECK(canon(&d_size, "4 kib", &v) && v.i == 4096);
    CHECK(canon_is(&d_size, "4096", "4KiB"));
    CHECK(canon_is(&d_size, "1.5G", "1536MiB"));
    CHECK(canon_is(&d_size, "1024M", "1GiB"));
    CHECK(canon_is(&d_size, "512", "512"));
    CHECK(canon_is(&d_size, "0", "0"));
    CHECK(fails_with(&d_size, "2X", "expected a size <= 4GiB (such as 512, 4K, "
                     "2MiB or 1.5G; units are binary), got \"2X\""));
    CHECK(fails_with(&d_size, "-1K", "expected a size"));
    CHECK(fails_with(&d_size, "5G", "expected a size <= 4GiB, got \"5G\""));
    CHECK(canon(&d_size, "4G", &v) && v.i == 4294967296LL);
    CHECK(fails_with(&d_size, "G", "expected a size"));
}

static void test_time(void)
{
    struct dlb_value v;
    CHECK(canon(&d_time, "500ms", &v) && v.f == 0.5);
    CHECK(canon(&d_time, "2s", &v) && v.f == 2.0);
    CHECK(canon(&d_time, "10us", &v));
    CHECK_NEAR(v.f, 1e-5, 1e-12);
    CHECK(canon(&d_time, "1min", &v) && v.f == 60.0);
    CHECK(canon(&d_time, "3", &v) && v.f == 3.0);
    CHECK(canon_is(&d_time, "0.2", "200ms"));
    CHECK(canon_is(&d_time, "0.2s", "200ms"));
    CHECK(canon_is(&d_time, "1.5s", "1500ms"));
    CHECK(canon_is(&d_time, "90", "90s"));
    CHECK(canon_is(&d_time, "120s", "2min"));
    CHECK(canon_is(&d_time, "10us", "10us"));
    CHECK(canon_is(&d_time, "0", "0s"));
    CHECK(fails_with(&d_time, "5 parsecs", "expected a time >= 0s (such as "
                     "500ms, 2s, 10us or 1min; a bare number is seconds), got "
                     "\"5 parsecs\""));
    CHECK(fails_with(&d_time, "-1s", "expected a time"));
    CHECK(fails_with(&d_time, "ms", "expected a time"));
}

static void test_string_and_copy(void)
{
    struct dlb_value v, c;
    CHECK(dlb_param_parse(&d_string, "  resnet  ", &v, why, sizeof why) == DLB_OK);
    CHECK(!strcmp(v.s, "resnet"));
    CHECK(dlb_value_copy(&c, &v) == DLB_OK && c.s != v.s && !strcmp(c.s, "resnet"));
    dlb_value_clear(&v);
    dlb_value_clear(&c);
    CHECK(v.s == NULL && c.s == NULL);
    CHECK(canon_is(&d_string, "", ""));
    CHECK(!strcmp(dlb_param_type_name(DLB_PARAM_TIME), "time"));
}

static void test_suggest(void)
{
    static const char *const keys[] = {"batch", "threads", "backend",
                                       "warmup", "warmup_max", NULL};
    CHECK(dlb_suggest("bacth", keys, 5) && !strcmp(dlb_suggest("bacth", keys, 5),
                                                   "batch"));
    CHECK(!strcmp(dlb_suggest("thread", keys, 5), "threads"));
    CHECK(!strcmp(dlb_suggest("warmup_mx", keys, 5), "warmup_max"));
    CHECK(dlb_suggest("zzzzz", keys, 5) == NULL);
    /* Short names tolerate one edit only. */
    CHECK(dlb_suggest("ab", (const char *const[]){"xy"}, 1) == NULL);
    CHECK(!strcmp(dlb_suggest("ab", (const char *const[]){"ax"}, 1), "ax"));
    CHECK(dlb_suggest("batch", keys, 0) == NULL);
    static const struct dlb_param_def tab[] = {
        {"a", DLB_PARAM_INT, "1", 0, 0, 0, NULL, NULL, "a"},
        {"b", DLB_PARAM_INT, "1", 0, 0, 0, NULL, NULL, "b"}};
    CHECK(dlb_param_find(tab, 2, "b") == 1);
    CHECK(dlb_param_find(tab, 2, "c") == -1);
}

/* Expand and compare with the expected items, joined by spaces. */
static int axis_is(const struct dlb_param_def *d, const char *text,
                   const char *want)
{
    char **items;
    size_t n;
    why[0] = '\0';
    if (dlb_axis_expand(d, text, &items, &n, why, sizeof why) != DLB_OK) {
        fprintf(stderr, "  axis \"%s\": %s\n", text, why);
        return 0;
    }
    char got[1024] = "";
    for (size_t k = 0; k < n; k++) {
        size_t used = strlen(got);
        snprintf(got + used, sizeof got - used, "%s%s", k ? " " : "", items[k]);
    }
    dlb_strv_free(items, n);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "  axis \"%s\" gave \"%s\", expected \"%s\"\n", text,
                got, want);
        return 0;
    }
    return 1;
}

static int axis_fails(const struct dlb_param_def *d, const char *text,
                      const char *part)
{
    char **items = NULL;
    size_t n = 0;
    why[0] = '\0';
    dlb_status st = dlb_axis_expand(d, text, &items, &n, why, sizeof why);
    if (st == DLB_OK) {
        dlb_strv_free(items, n);
        fprintf(stderr, "  axis \"%s\" was accepted\n", text);
        return 0;
    }
    if (!strstr(why, part)) {
        fprintf(stderr, "  axis \"%s\": \"%s\" lacks \"%s\"\n", text, why, part);
        return 0;
    }
    return 1;
}

static void test_axis(void)
{
    CHECK(axis_is(&d_int, "16, 32 ,64", "16 32 64"));
    CHECK(axis_is(&d_int, "16:1024:x2", "16 32 64 128 256 512 1024"));
    CHECK(axis_is(&d_int, "1:10:+3", "1 4 7 10"));
    CHECK(axis_is(&d_int, "1:10:3", "1 4 7 10"));
    CHECK(axis_is(&d_int, "1:9:3", "1 4 7"));
    CHECK(axis_is(&d_int, "1, 8:32:x2", "1 8 16 32"));
    CHECK(axis_is(&d_int, "5:5:+1", "5"));
    /* Rounding repeats 2 (1.5 and 2.25); the repeat is dropped. */
    CHECK(axis_is(&d_int, "1:4:x1.5", "1 2 3"));
    CHECK(axis_is(&d_unit, "0:1:+0.1", "0 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1"));
    CHECK(axis_is(&d_float, "0.001:0.1:x10", "0.001 0.01 0.1"));
    CHECK(axis_is(&d_size, "4K:64K:x4", "4KiB 16KiB 64KiB"));
    CHECK(axis_is(&d_size, "1M, 2M", "1MiB 2MiB"));
    CHECK(axis_is(&d_time, "100ms:500ms:+200ms", "100ms 300ms 500ms"));
    CHECK(axis_is(&d_enum, "fp32, BF16", "fp32 bf16"));
    CHECK(axis_is(&d_bool, "off, on", "off on"));
    CHECK(axis_is(&d_string, "lenet, a:b", "lenet a:b"));

    CHECK(axis_fails(&d_int, "16, abc", "expected an integer between 1 and "
                     "4096, got \"abc\""));
    CHECK(axis_fails(&d_int, "", "empty list"));
    CHECK(axis_fails(&d_int, "1,,2", "empty item"));
    CHECK(axis_fails(&d_int, "64, 64", "64 appears twice"));
    CHECK(axis_fails(&d_int, "1:10", "expected a range START:END:STEP"));
    CHECK(axis_fails(&d_int, "1:10:2:3", "expected a range START:END:STEP"));
    CHECK(axis_fails(&d_int, "10:1:1", "runs backwards"));
    CHECK(axis_fails(&d_int, "1:10:0", "the step must be > 0"));
    CHECK(axis_fails(&d_int, "1:10:x1", "the factor after 'x' must be a "
                     "number > 1"));
    CHECK(axis_fails(&d_int, "1:8192:x2", "got \"8192\""));
    CHECK(axis_fails(&d_int, "0:64:+8", "got \"0\""));
    CHECK(axis_fails(&d_int_free, "0:64:x2", "must start above 0"));
    CHECK(axis_fails(&d_int_free, "1:100000000:1", "more than 10000 values"));
    CHECK(axis_fails(&d_enum, "fp32, fp8", "expected one of"));
}

static int table_fails(const struct dlb_param_def *t, unsigned n,
                       const char *part)
{
    why[0] = '\0';
    if (dlb_param_table_check(t, n, why, sizeof why) == DLB_OK) {
        fprintf(stderr, "  table accepted, expected \"%s\"\n", part);
        return 0;
    }
    if (!strstr(why, part)) {
        fprintf(stderr, "  table: \"%s\" lacks \"%s\"\n", why, part);
        return 0;
    }
    return 1;
}

static void test_table_check(void)
{
    const struct dlb_param_def good[] = {d_int, d_float, d_bool, d_enum,
                                         d_size, d_time, d_string};
    CHECK(dlb_param_table_check(good, 7, why, sizeof why) == DLB_OK);
    CHECK(dlb_param_table_check(NULL, 0, why, sizeof why) == DLB_OK);

    struct dlb_param_def t[2] = {d_int, d_int};
    CHECK(table_fails(t, 2, "'batch' appears twice"));
    t[1] = d_int;
    t[1].name = "";
    CHECK(table_fails(t, 2, "must be non-empty"));
    t[1].name = "Batch";
    CHECK(table_fails(t, 2, "use only a-z"));
    t[1] = d_int;
    t[1].name = "b2";
    t[1].def = "0";
    CHECK(table_fails(t, 2, "parameter 'b2': default \"0\" does not parse: "
                      "expected an integer between 1 and 4096"));
    t[1] = d_enum;
    t[1].choices = NULL;
    CHECK(table_fails(t, 2, "an enum needs a NULL-terminated choices list"));
    t[1] = d_int;
    t[1].name = "b2";
    t[1].min = 10;
    t[1].max = 1;
    CHECK(table_fails(t, 2, "min 10 is greater than max 1"));
    t[1] = d_float;
    t[1].help = NULL;
    CHECK(table_fails(t, 2, "no help text"));
    t[1] = d_float;
    t[1].type = (enum dlb_param_type)42;
    CHECK(table_fails(t, 2, "unknown type 42"));
    t[1] = d_float;
    t[1].def = NULL;
    CHECK(table_fails(t, 2, "no default"));
}

static void test_help(void)
{
    const struct dlb_param_def tab[] = {d_int, d_enum, d_time, d_string};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    if (!f)
        return;
    dlb_param_print_help(f, tab, 4);
    fclose(f);
    CHECK(strstr(buf, "KEY") == buf);
    CHECK(strstr(buf, "fp32|bf16|fp16") != NULL);
    CHECK(strstr(buf, "between 1 and 4096") != NULL);
    CHECK(strstr(buf, "mini-batch size") != NULL);
    /* Aligned: every row's type column starts where the header's does. */
    const char *type_col = strstr(buf, "TYPE");
    size_t col = (size_t)(type_col - buf);
    for (const char *nl = strchr(buf, '\n'); nl && nl[1]; nl = strchr(nl + 1, '\n'))
        CHECK(nl[1 + col] != ' ' && nl[col] == ' ');
    free(buf);
}

int main(void)
{
    test_int();
    test_float();
    test_bool();
    test_enum();
    test_size();
    test_time();
    test_string_and_copy();
    test_suggest();
    test_axis();
    test_table_check();
    test_help();
    return check_exit();
}
