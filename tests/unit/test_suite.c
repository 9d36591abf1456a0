/* Suite files: good suites load into the expected settings, axes and
 * filters; each bad suite fails with DLB_ERR_INPUT (or the plugin's own
 * status) and a message that names the file, the line and the key. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "fake_plugins.h"
#include "suite/param.h"
#include "suite/suite.h"

/* "$srcdir/tests/unit/suites/NAME": automake runs tests with srcdir set. */
static const char *suite_path(const char *name)
{
    static char buf[4096];
    const char *srcdir = getenv("srcdir");
    snprintf(buf, sizeof buf, "%s/tests/unit/suites/%s",
             srcdir && *srcdir ? srcdir : ".", name);
    return buf;
}

/* zlib's CRC-32 of the file's bytes, as results record it. */
static uint32_t file_crc32(const char *path)
{
    unsigned char buf[4096];
    uLong crc = crc32(0L, Z_NULL, 0);
    FILE *f = fopen(path, "rb");
    size_t n;
    while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
        crc = crc32(crc, buf, (uInt)n);
    if (f)
        fclose(f);
    return (uint32_t)crc;
}

static const char *fixed_text(const struct dlb_suite *s, const char *key)
{
    char name[256];
    for (size_t k = 0; k < s->n_fixed; k++) {
        dlb_suite_key_name(s, s->fixed[k].ref, name, sizeof name);
        if (!strcmp(name, key))
            return s->fixed[k].text;
    }
    return NULL;
}

static void test_basic(void)
{
    struct dlb_suite s;
    struct dlb_error err = {""};
    dlb_status st = dlb_suite_load(suite_path("good-basic.ini"), fake_lookup,
                                   NULL, &s, &err);
    CHECK(st == DLB_OK);
    if (st != DLB_OK) {
        fprintf(stderr, "  %s\n", err.msg);
        return;
    }
    CHECK(!strcmp(s.name, "basic"));
    CHECK(s.n_ns == 1 && !strcmp(s.ns[0].name, "suite"));
    CHECK(s.ns[0].n == dlb_suite_n_keys);
    CHECK(s.n_axes == 0 && s.n_filters == 0 && s.n_quick == 0);
    CHECK(s.n_fixed == 7);
    /* Inline comments of both kinds are stripped; values are canonical. */
    CHECK(fixed_text(&s, "name") && !strcmp(fixed_text(&s, "name"), "basic"));
    CHECK(!strcmp(fixed_text(&s, "description"), "fixed settings only"));
    CHECK(!strcmp(fixed_text(&s, "warmup"), "500ms"));
    CHECK(!strcmp(fixed_text(&s, "memory_limit"), "2GiB"));
    CHECK(s.fixed[3].line == 6 && !strcmp(fixed_text(&s, "batch"), "128"));
    CHECK(s.crc32 == file_crc32(suite_path("good-basic.ini")));
    dlb_suite_free(&s);
}

static void test_sweep(void)
{
    struct dlb_suite s;
    struct dlb_error err = {""};
    dlb_status st = dlb_suite_load(suite_path("good-sweep.ini"), fake_lookup,
                                   NULL, &s, &err);
    CHECK(st == DLB_OK);
    if (st != DLB_OK) {
        fprintf(stderr, "  %s\n", err.msg);
        return;
    }
    CHECK(!strcmp(s.name, "good-sweep"));
    CHECK(s.n_ns == 2 && !strcmp(s.ns[1].name, "amp"));
    /* The plugin's table plus the implicit `enable`. */
    CHECK(s.ns[1].n == 4 && !strcmp(s.ns[1].defs[3].name, "enable"));
    CHECK(s.ns[1].plugin == &fake_amp);
    CHECK(s.n_axes == 2);
    CHECK(s.axes[0].ref.ns == 0 && s.axes[0].n == 3 && s.axes[0].line == 7);
    CHECK(!strcmp(s.axes[0].items[0], "32") && !strcmp(s.axes[0].items[2], "128"));
    CHECK(s.axes[1].ref.ns == 1 && s.axes[1].n == 3);
    CHECK(s.n_filters == 3);
    CHECK(s.filters[0].only == 0 && s.filters[0].n == 2 && s.filters[0].line == 9);
    CHECK(s.filters[0].terms[1].n == 2 &&
          !strcmp(s.filters[0].terms[1].items[0], "fp16"));
    CHECK(s.filters[1].terms[1].negate == 1);
    CHECK(s.filters[2].only == 1 && s.filters[2].terms[0].n == 3);
    CHECK(s.n_fixed == 3 && !strcmp(fixed_text(&s, "amp.init_scale"), "1024"));
    CHECK(s.n_quick == 2 && s.n_quick_axes == 1);
    CHECK(s.quick_axes[0].ref.ns == 1 && s.quick_axes[0].n == 2);

    struct dlb_keyref r;
    CHECK(dlb_suite_resolve_key(&s, "amp.precision", &r, &err) == DLB_OK &&
          r.ns == 1 && r.param == 0);
    CHECK(dlb_suite_resolve_key(&s, "batch", &r, &err) == DLB_OK && r.ns == 0);
    CHECK(dlb_suite_resolve_key(&s, "precision", &r, &err) == DLB_ERR_INPUT &&
          strstr(err.msg, "did you mean 'amp.precision'?"));
    CHECK(dlb_suite_resolve_key(&s, "ampp.precision", &r, &err) == DLB_ERR_INPUT
          && strstr(err.msg, "no plugin 'ampp' in this suite (did you mean "
                    "'amp'?)"));
    CHECK(dlb_suite_resolve_key(&s, "amp.precison", &r, &err) == DLB_ERR_INPUT &&
          strstr(err.msg, "did you mean 'amp.precision'?"));
    char name[64];
    dlb_suite_key_name(&s, (struct dlb_keyref){1, 3}, name, sizeof name);
    CHECK(!strcmp(name, "amp.enable"));
    dlb_suite_free(&s);
}

static void test_plugins(void)
{
    struct dlb_suite s;
    struct dlb_error err = {""};
    dlb_status st = dlb_suite_load(suite_path("good-plugins.ini"), fake_lookup,
                                   NULL, &s, &err);
    CHECK(st == DLB_OK);
    if (st != DLB_OK) {
        fprintf(stderr, "  %s\n", err.msg);
        return;
    }
    /* Activation order: first mention in the file. */
    CHECK(s.n_ns == 4);
    CHECK(s.n_ns == 4 && !strcmp(s.ns[1].name, "mempool") &&
          !strcmp(s.ns[2].name, "amp") && !strcmp(s.ns[3].name, "tiny"));
    dlb_suite_free(&s);
    CHECK(dlb_suite_load(suite_path("good-noname.ini"), NULL, NULL, &s,
                         &err) == DLB_OK);
    CHECK(s.name && !strcmp(s.name, "good-noname"));
    dlb_suite_free(&s);
}

struct bad_case {
    const char *file;
    int line;
    const char *part; /* the message after "FILE:LINE: " contains this */
    dlb_status st;
};

static const struct bad_case bad[] = {
    {"bad-unknown-key.ini", 3, "[suite] unknown key 'bacth' (did you mean "
     "'batch'?)", DLB_ERR_INPUT},
    {"bad-unknown-section.ini", 3, "unknown section [swep] (did you mean "
     "[sweep]?)", DLB_ERR_INPUT},
    {"bad-type.ini", 3, "batch: expected an integer between 1 and 1048576, "
     "got \"abc\"", DLB_ERR_INPUT},
    {"bad-range.ini", 2, "momentum: expected a number between 0 and 1, got "
     "\"1.5\"", DLB_ERR_INPUT},
    {"bad-enum.ini", 2, "mode: expected one of train, infer, got \"trian\" "
     "(did you mean 'train'?)", DLB_ERR_INPUT},
    {"bad-duplicate.ini", 4, "duplicate key 'batch': already set at line 2",
     DLB_ERR_INPUT},
    {"bad-dup-axis.ini", 5, "duplicate key 'batch': already set at line 2",
     DLB_ERR_INPUT},
    {"bad-nosweep.ini", 2, "name cannot be a sweep axis; set it in [suite]",
     DLB_ERR_INPUT},
    {"bad-empty-sweep.ini", 4, "batch: empty list", DLB_ERR_INPUT},
    {"bad-unknown-plugin.ini", 4, "unknown plugin 'ampp' (did you mean "
     "'amp'?)", DLB_ERR_INPUT},
    {"bad-plugin-list.ini", 2, "unknown plugin 'mempol' (did you mean "
     "'mempool'?)", DLB_ERR_INPUT},
    {"bad-sweep-key.ini", 2, "unknown key 'amp.precison' (did you mean "
     "'amp.precision'?)", DLB_ERR_INPUT},
    {"bad-plugin-key.ini", 2, "[amp] unknown key 'precison' (did you mean "
     "'precision'?)", DLB_ERR_INPUT},
    {"bad-plugin-enum.ini", 3, "amp.precision: expected one of fp32, bf16, "
     "fp16, got \"fp8\"", DLB_ERR_INPUT},
    {"bad-plugin-sweep.ini", 3, "amp.growth_interval cannot be a sweep axis; "
     "set it in [amp]", DLB_ERR_INPUT},
    {"bad-malformed.ini", 3, "malformed line \"this is not ini\"",
     DLB_ERR_INPUT},
    {"bad-multiline.ini", 3, "malformed line \"  continued here\"",
     DLB_ERR_INPUT},
    {"bad-nosection.ini", 1, "key 'batch' comes before any section",
     DLB_ERR_INPUT},
    {"bad-section-syntax.ini", 3, "malformed line \"[sweep\"", DLB_ERR_INPUT},
    {"bad-filter-key.ini", 3, "skip: unknown key 'bacth' (did you mean "
     "'batch'?)", DLB_ERR_INPUT},
    {"bad-filter-value.ini", 3, "skip: batch: expected an integer between 1 "
     "and 1048576, got \"abc\"", DLB_ERR_INPUT},
    {"bad-filter-term.ini", 3, "only: term \"batch\" has no '='",
     DLB_ERR_INPUT},
    {"bad-filter-empty.ini", 3, "skip: empty filter", DLB_ERR_INPUT},
    {"bad-quick-plugin.ini", 4, "unknown key 'quant.bits': no plugin 'quant' "
     "in this suite", DLB_ERR_INPUT},
    {"bad-quick-filter.ini", 2, "[quick] skip: filters belong in [sweep]",
     DLB_ERR_INPUT},
    {"bad-size.ini", 2, "memory_limit: expected a size >= 0 (such as 512, "
     "4K, 2MiB or 1.5G; units are binary), got \"2X\"", DLB_ERR_INPUT},
    {"bad-time.ini", 2, "timeout: expected a time > 0s (such as 500ms, 2s, "
     "10us or 1min; a bare number is seconds), got \"5 parsecs\"",
     DLB_ERR_INPUT},
    {"bad-axis-range.ini", 2, "batch: range \"1024:16:x2\" runs backwards",
     DLB_ERR_INPUT},
    {"bad-axis-item.ini", 2, "batch: expected an integer between 1 and "
     "1048576, got \"0\"", DLB_ERR_INPUT},
    {"bad-workload.ini", 2, "workload 'amp': plugin 'amp' provides no "
     "workload", DLB_ERR_INPUT},
    {"bad-plugin-table.ini", 3, "plugin 'broken': bad parameter table: "
     "parameter 'level': default \"11\" does not parse", DLB_ERR_PLUGIN},
    {"bad-empty-key.ini", 2, "empty key", DLB_ERR_INPUT},
    {"bad-suite-dotted.ini", 2, "[suite] unknown key 'amp.precision'; "
     "PLUGIN.key names belong in [sweep] or [quick]", DLB_ERR_INPUT},
};

static int load_fails(const char *path, int line, const char *part,
                      dlb_status want)
{
    struct dlb_suite s;
    struct dlb_error err = {""};
    dlb_status st = dlb_suite_load(path, fake_lookup, NULL, &s, &err);
    if (st == DLB_OK) {
        fprintf(stderr, "  %s: loaded, expected \"%s\"\n", path, part);
        dlb_suite_free(&s);
        return 0;
    }
    char prefix[4200];
    snprintf(prefix, sizeof prefix, "%s:%d: ", path, line);
    int ok = st == want && strncmp(err.msg, prefix, strlen(prefix)) == 0 &&
             strstr(err.msg + strlen(prefix), part) != NULL;
    if (!ok)
        fprintf(stderr, "  %s: status %s, message \"%s\"; expected %s and "
                "\"%s%s\"\n", path, dlb_status_name(st), err.msg,
                dlb_status_name(want), prefix, part);
    /* A failed load leaves nothing to free, and freeing again is safe. */
    CHECK(s.ns == NULL && s.n_axes == 0);
    dlb_suite_free(&s);
    return ok;
}

static void test_bad_files(void)
{
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        CHECK(load_fails(suite_path(bad[k].file), bad[k].line, bad[k].part,
                         bad[k].st));
}

/* Writes `text` (len bytes) to a temporary suite; returns its path. */
static char *temp_suite(const char *text, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    char *path = malloc(4096);
    snprintf(path, 4096, "%s/dlb-suite-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
        if (fd >= 0)
            close(fd);
        free(path);
        return NULL;
    }
    close(fd);
    return path;
}

static void test_generated(void)
{
    /* A line too long for inih's buffer would be split in two silently. */
    size_t n = 6000;
    char *text = malloc(n + 64);
    strcpy(text, "[suite]\ndescription = ");
    size_t used = strlen(text);
    memset(text + used, 'x', n);
    strcpy(text + used + n, "\n");
    char *path = temp_suite(text, strlen(text));
    CHECK(path && load_fails(path, 2, "line longer than 4093 characters",
                             DLB_ERR_INPUT));
    if (path)
        unlink(path);
    free(path);

    /* A line just under the limit is fine. */
    memset(text + used, 'y', 4000);
    strcpy(text + used + 4000, "\n");
    path = temp_suite(text, strlen(text));
    struct dlb_suite s;
    struct dlb_error err = {""};
    CHECK(path && dlb_suite_load(path, NULL, NULL, &s, &err) == DLB_OK &&
          s.n_fixed == 1 && strlen(s.fixed[0].text) == 4000);
    dlb_suite_free(&s);
    if (path)
        unlink(path);
    free(path);
    free(text);

    static const char nul[] = "[suite]\nbatch = 6\0004\n";
    path = temp_suite(nul, sizeof nul - 1);
    CHECK(path && load_fails(path, 2, "NUL byte", DLB_ERR_INPUT));
    if (path)
        unlink(path);
    free(path);

    /* CRLF line ends and a UTF-8 byte order mark are accepted. */
    static const char crlf[] = "\xEF\xBB\xBF[suite]\r\nbatch = 32\r\n[amp]\r\n";
    path = temp_suite(crlf, sizeof crlf - 1);
    CHECK(path && dlb_suite_load(path, fake_lookup, NULL, &s, &err) == DLB_OK &&
          s.n_fixed == 1 && !strcmp(s.fixed[0].text, "32") && s.n_ns == 2);
    dlb_suite_free(&s);
    if (path)
        unlink(path);
    free(path);
}

static void test_missing(void)
{
    struct dlb_suite s;
    struct dlb_error err = {""};
    const char *path = suite_path("no-such-suite.ini");
    CHECK(dlb_suite_load(path, fake_lookup, NULL, &s, &err) == DLB_ERR_IO);
    char want[4200];
    snprintf(want, sizeof want, "cannot open %s: No such file or directory",
             path);
    CHECK(!strcmp(err.msg, want));
}

static void test_find(void)
{
    struct dlb_error err = {""};
    const char *path = suite_path("good-basic.ini");
    char *found = dlb_suite_find(path, NULL, &err);
    CHECK(found && !strcmp(found, path));
    free(found);

    char dir[4200];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    found = dlb_suite_find("good-sweep", dir, &err);
    CHECK(found && strstr(found, "/good-sweep.ini"));
    free(found);
    found = dlb_suite_find("good-sweep.ini", dir, &err);
    CHECK(found && strstr(found, "/good-sweep.ini"));
    free(found);
    CHECK(dlb_suite_find("good-swep", dir, &err) == NULL &&
          strstr(err.msg, "no suite 'good-swep' (did you mean 'good-sweep'?)"));
    CHECK(dlb_suite_find("nothing-like-it", dir, &err) == NULL &&
          strstr(err.msg, "looked for nothing-like-it.ini in ./suites:"));
    CHECK(dlb_suite_find("/no/such/dir/x.ini", dir, &err) == NULL &&
          strstr(err.msg, "/no/such/dir/x.ini"));
}

int main(void)
{
    test_basic();
    test_sweep();
    test_plugins();
    test_bad_files();
    test_generated();
    test_missing();
    test_find();
    return check_exit();
}
