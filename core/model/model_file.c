/* Reads a network description: inih with pinned options and a reader that
 * counts lines and sees section headers (inih reports neither), then one
 * pass over the sections that types the keys, resolves the inputs each
 * layer names and infers its shapes and FLOPs (model_shape.c). */
#define _POSIX_C_SOURCE 200809L
#include "model/model_file.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_weights.h"
#include "model/onnx_map.h"
#include "util/ini_lines.h"
#include "suite/param.h" /* the typed reader of parameter tables */

#define MF_MAX_LINE 1024

struct mf_key {
    char *name, *value;
    int line, used;
};

struct mf_section {
    char name[64];
    int line;
    size_t first, n;   /* its keys in mf.keys */
};

struct mf {
    const char *file;
    const char *buf;
    size_t len;
    struct mf_section *secs;
    size_t n_secs;
    struct mf_key *keys;
    size_t n_keys;
    dlb_status st;
    struct dlb_error *err;
};

static dlb_status fail(struct mf *m, int line, dlb_status s, const char *fmt,
                       ...) __attribute__((format(printf, 4, 5)));

static dlb_status fail(struct mf *m, int line, dlb_status s, const char *fmt,
                       ...)
{
    char what[768];
    va_list ap;
    if (m->st != DLB_OK)
        return m->st; /* keep the first error */
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    m->st = s;
    return dlb_errorf(m->err, s, "%s:%d: %s", m->file, line, what);
}

/* ---- pass 1: INI text to sections and keys ------------------------ */

static dlb_status on_section(void *user, const char *name, size_t len, int line)
{
    struct mf *m = user;
    struct mf_section *s = realloc(m->secs, (m->n_secs + 1) * sizeof *s);
    if (!s)
        return fail(m, line, DLB_ERR_NOMEM, "out of memory");
    m->secs = s;
    s += m->n_secs++;
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%.*s", (int)len, name);
    s->line = line;
    s->first = m->n_keys;
    if (len >= sizeof s->name || len == 0)
        return fail(m, line, DLB_ERR_INPUT, "section name must have 1 to %zu "
                    "characters", sizeof s->name - 1);
    return DLB_OK;
}

/* Repeated section names are told apart by the order of on_section calls,
 * so `section` itself is not needed. */
static dlb_status on_key(void *user, const char *section, const char *name,
                         const char *value, int line)
{
    struct mf *m = user;
    (void)section;
    if (m->n_secs == 0)
        return fail(m, line, DLB_ERR_INPUT, "key '%s' before any section; "
                    "a model file starts with [net]", name);
    struct mf_key *k = realloc(m->keys, (m->n_keys + 1) * sizeof *k);
    if (!k)
        return fail(m, line, DLB_ERR_NOMEM, "out of memory");
    m->keys = k;
    k += m->n_keys++;
    k->name = strdup(name);
    k->value = strdup(value);
    k->line = line;
    k->used = 0;
    m->secs[m->n_secs - 1].n++;
    if (!k->name || !k->value)
        return fail(m, line, DLB_ERR_NOMEM, "out of memory");
    return DLB_OK;
}

static dlb_status read_ini(struct mf *m)
{
    static const struct dlb_ini_sink sink = {on_section, on_key};
    char why[512];
    int line = 0;
    dlb_status st = dlb_ini_parse(m->buf, m->len, MF_MAX_LINE, "a model file",
                                  &sink, m, &line, why, sizeof why);
    if (st != DLB_OK && m->st == DLB_OK)
        return fail(m, line, st, "%s", why);
    return m->st;
}

/* ---- pass 2: keys to typed layer parameters ----------------------- */

/* Each layer type's keys are a parameter table, read as suite files are
 * (core/suite/param*.c: the value parsed, bounded and canonical, the
 * nearest name of a misspelt key); the messages are this file's own. A
 * key without a default is one the layer needs. `off` and `store` say
 * where the value goes in struct dlb_layer_spec. */
enum key_store { K_U32, K_F32, K_BIT, K_DROPOUT_MODE };

struct key_def {
    struct dlb_param_def p;
    size_t off;
    enum key_store store;
};

/* bias is 0 or 1 as darknet writes it, not on/off: tests/bench/
 * vs_pytorch.py reads these files too. */
static const char *const bits[] = { "0", "1", NULL };
static const char *const dropout_modes[] = { "element", "channel", NULL };

#define L_OFF(f) offsetof(struct dlb_layer_spec, f)
#define BOUNDS_ (DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX)
#define U32(name, def, lo, hi, f, help)                                       \
    { { name, DLB_PARAM_INT, def, BOUNDS_, lo, hi, NULL, NULL, help },        \
      L_OFF(f), K_U32 }
#define F32(name, def, lo, hi, f, help)                                       \
    { { name, DLB_PARAM_FLOAT, def, BOUNDS_, lo, hi, NULL, NULL, help },      \
      L_OFF(f), K_F32 }
#define ONE_OF(name, def, choices, f, store, help)                            \
    { { name, DLB_PARAM_ENUM, def, 0, 0, 0, choices, NULL, help }, L_OFF(f),  \
      store }
#define END_KEYS                                                              \
    { { NULL, DLB_PARAM_INT, NULL, 0, 0, 0, NULL, NULL, NULL }, 0, K_U32 }

static const struct key_def conv_keys[] = {
    U32("filters", NULL, 1, 65536, filters, "output channels"),
    U32("size", NULL, 1, 1024, size, "kernel height and width"),
    U32("stride", "1", 1, 1024, stride, "step between windows"),
    U32("pad", "0", 0, 1024, pad, "zeros around the input on each side"),
    ONE_OF("bias", "1", bits, bias, K_BIT, "a learnt bias per channel"),
    U32("groups", "1", 1, 65536, groups, "channel groups: each output group "
        "reads one input group (depthwise: the input channels)"),
    END_KEYS };
static const struct key_def relu_keys[] = {
    F32("max", "0", 0, 1e6, relu_max, "clip above (ReLU6: 6); 0 for none"),
    END_KEYS };
static const struct key_def pool_keys[] = {
    U32("size", NULL, 1, 1024, size, "window height and width"),
    /* absent: = size (layer_keys) */
    U32("stride", "1", 1, 1024, stride, "step between windows"),
    U32("pad", "0", 0, 1024, pad, "padding on each side"),
    END_KEYS };
static const struct key_def dropout_keys[] = {
    F32("p", "0.5", 0, 0.999, p, "share of elements zeroed in training"),
    ONE_OF("mode", "element", dropout_modes, mode, K_DROPOUT_MODE,
           "element, or channel: whole planes (dropout2d)"),
    END_KEYS };
static const struct key_def bn_keys[] = {
    F32("eps", "1e-5", 1e-12, 1, eps, "added to the variance"),
    F32("momentum", "0.1", 0, 1, momentum, "weight of a batch in the "
        "running statistics"),
    END_KEYS };
static const struct key_def linear_keys[] = {
    U32("out", NULL, 1, 1u << 24, out, "output features"),
    ONE_OF("bias", "1", bits, bias, K_BIT, "a learnt bias per output"),
    END_KEYS };
static const struct key_def no_keys[] = { END_KEYS };

static const char *const kind_names[DLB_LAYER_KIND_COUNT] = {
    "conv", "maxpool", "avgpool", "relu", "dropout", "batchnorm", "linear",
    "flatten", "logsoftmax", "add", "concat", "global_avgpool" };

static const struct key_def *const kind_keys[DLB_LAYER_KIND_COUNT] = {
    conv_keys, pool_keys, pool_keys, relu_keys, dropout_keys, bn_keys,
    linear_keys, no_keys, no_keys, no_keys, no_keys, no_keys };

const char *dlb_layer_kind_name(enum dlb_layer_kind k)
{
    return (unsigned)k < DLB_LAYER_KIND_COUNT ? kind_names[k] : "unknown";
}

/* " (did you mean 'x'?)" or "" */
static const char *did_you_mean(char *buf, size_t len, const char *name,
                                const char *const *cands, size_t n)
{
    const char *best = dlb_suggest(name, cands, n);
    if (!best)
        return "";
    snprintf(buf, len, " (did you mean '%s'?)", best);
    return buf;
}

/* The value's error: the choices ("expected element or channel", with the
 * nearest one when they are words), or the type and its bounds. */
static dlb_status bad_value(struct mf *m, const struct dlb_layer_spec *L,
                            const struct key_def *d, const char *v, int line)
{
    const char *const *c = d->p.choices;
    char hint[96];
    if (d->p.type != DLB_PARAM_ENUM)
        return fail(m, line, DLB_ERR_INPUT, "layer '%s': %s = '%s'; expected "
                    "%s from %g to %g", L->name, d->p.name, v,
                    d->p.type == DLB_PARAM_INT ? "an integer" : "a number",
                    d->p.min, d->p.max);
    return fail(m, line, DLB_ERR_INPUT, "layer '%s': %s = '%s'; expected %s "
                "or %s%s", L->name, d->p.name, v, c[0], c[1],
                isalpha((unsigned char)c[0][0])
                    ? did_you_mean(hint, sizeof hint, v, c, 2) : "");
}

static dlb_status set_value(struct mf *m, const struct dlb_layer_spec *L,
                            const struct key_def *d, const char *v, int line,
                            struct dlb_layer_spec *out)
{
    struct dlb_value val;
    void *dst = (char *)out + d->off;
    if (dlb_param_parse(&d->p, v, &val, NULL, 0) != DLB_OK)
        return bad_value(m, L, d, v, line);
    /* A choice as written: suite files forgive its case, these files do
     * not (vs_pytorch.py reads them as they are). */
    if (d->p.type == DLB_PARAM_ENUM && strcmp(val.s, v) != 0) {
        dlb_value_clear(&val);
        return bad_value(m, L, d, v, line);
    }
    switch (d->store) {
    case K_U32: *(uint32_t *)dst = (uint32_t)val.i; break;
    case K_F32: *(float *)dst = (float)val.f; break;
    case K_BIT: *(int *)dst = val.i != 0; break;
    case K_DROPOUT_MODE:
        *(enum dlb_dropout_mode *)dst = val.i ? DLB_DROPOUT_CHANNEL
                                              : DLB_DROPOUT_ELEMENT;
        break;
    }
    dlb_value_clear(&val);
    return DLB_OK;
}

static struct mf_key *find_key(struct mf *m, const struct mf_section *s,
                               const char *name)
{
    for (size_t i = s->first; i < s->first + s->n; i++)
        if (!strcmp(m->keys[i].name, name))
            return &m->keys[i];
    return NULL;
}

/* Duplicate keys hide a typo or a paste error: refuse them. */
static dlb_status check_duplicates(struct mf *m, const struct mf_section *s)
{
    for (size_t i = s->first; i < s->first + s->n; i++)
        for (size_t j = s->first; j < i; j++)
            if (!strcmp(m->keys[i].name, m->keys[j].name))
                return fail(m, m->keys[i].line, DLB_ERR_INPUT, "[%s]: key '%s' "
                            "is set twice (first on line %d)", s->name,
                            m->keys[i].name, m->keys[j].line);
    return DLB_OK;
}

static dlb_status unknown_keys(struct mf *m, const struct mf_section *s,
                               const struct key_def *defs, const char *kind)
{
    const char *names[16];
    size_t n = 0;
    char hint[96];
    names[n++] = "type";
    names[n++] = "input";
    for (const struct key_def *d = defs; d->p.name; d++)
        names[n++] = d->p.name;
    for (size_t i = s->first; i < s->first + s->n; i++)
        if (!m->keys[i].used)
            return fail(m, m->keys[i].line, DLB_ERR_INPUT, "layer '%s': %s has "
                        "no key '%s'%s", s->name, kind, m->keys[i].name,
                        did_you_mean(hint, sizeof hint, m->keys[i].name, names,
                                     n));
    return DLB_OK;
}

static dlb_status layer_keys(struct mf *m, const struct mf_section *s,
                             struct dlb_layer_spec *L)
{
    struct mf_key *t = find_key(m, s, "type");
    char hint[96];
    if (!t)
        return fail(m, s->line, DLB_ERR_INPUT, "layer '%s': no 'type = ...' "
                    "(one of conv, maxpool, avgpool, global_avgpool, relu, "
                    "dropout, batchnorm, linear, flatten, logsoftmax, add, "
                    "concat)", s->name);
    t->used = 1;
    struct mf_key *in = find_key(m, s, "input");
    if (in)
        in->used = 1; /* read by read_inputs, once the kind is known */
    int kind = -1;
    for (int k = 0; k < DLB_LAYER_KIND_COUNT; k++)
        if (!strcmp(t->value, kind_names[k]))
            kind = k;
    if (kind < 0)
        return fail(m, t->line, DLB_ERR_INPUT, "layer '%s': unknown type '%s'%s",
                    s->name, t->value,
                    did_you_mean(hint, sizeof hint, t->value, kind_names,
                                 DLB_LAYER_KIND_COUNT));
    L->kind = (enum dlb_layer_kind)kind;
    /* A misspelt key explains a "missing" one: report it first. */
    for (const struct key_def *d = kind_keys[kind]; d->p.name; d++) {
        struct mf_key *k = find_key(m, s, d->p.name);
        if (k)
            k->used = 1;
    }
    if (unknown_keys(m, s, kind_keys[kind], kind_names[kind]))
        return m->st;
    for (const struct key_def *d = kind_keys[kind]; d->p.name; d++) {
        struct mf_key *k = find_key(m, s, d->p.name);
        if (!k && !d->p.def)
            return fail(m, s->line, DLB_ERR_INPUT, "layer '%s': %s needs '%s = "
                        "...'", s->name, kind_names[kind], d->p.name);
        if (set_value(m, L, d, k ? k->value : d->p.def, k ? k->line : s->line, L))
            return m->st;
    }
    if ((L->kind == DLB_LAYER_MAXPOOL || L->kind == DLB_LAYER_AVGPOOL) &&
        !find_key(m, s, "stride"))
        L->stride = L->size; /* non-overlapping windows, as darknet */
    return DLB_OK;
}

/* ---- the graph: `input = NAME[, NAME ...]` ------------------------ */

/* Layer L (section `si`) reads the outputs named by its input key: earlier
 * layers, or net (the network's input). Without the key it reads the
 * layer before, which the shape pass fills in. */
static dlb_status read_inputs(struct mf *m, size_t si,
                              const struct dlb_model_spec *spec,
                              struct dlb_layer_spec *L)
{
    const struct mf_section *s = &m->secs[si];
    struct mf_key *k = find_key(m, s, "input");
    char hint[96] = "", buf[MF_MAX_LINE], *save = NULL;
    size_t n_prev = spec->n_layers - 1;
    if (!k) {
        if (L->kind == DLB_LAYER_ADD || L->kind == DLB_LAYER_CONCAT)
            return fail(m, s->line, DLB_ERR_INPUT, "layer '%s': %s needs "
                        "'input = A, B' naming the layers it %s", L->name,
                        kind_names[L->kind],
                        L->kind == DLB_LAYER_ADD ? "sums" : "joins");
        return DLB_OK;
    }
    snprintf(buf, sizeof buf, "%s", k->value);
    for (char *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok))
            tok++;
        for (char *e = tok + strlen(tok); e > tok && isspace((unsigned char)e[-1]);)
            *--e = '\0';
        if (L->n_inputs == DLB_LAYER_MAX_INPUTS)
            return fail(m, k->line, DLB_ERR_INPUT, "layer '%s': input names "
                        "more than %d layers", L->name, DLB_LAYER_MAX_INPUTS);
        int32_t j = -2;
        if (!strcmp(tok, "net"))
            j = DLB_LAYER_INPUT;
        for (size_t p = 0; p < n_prev && j == -2; p++)
            if (!strcmp(tok, spec->layers[p].name))
                j = (int32_t)p;
        if (j == -2) {
            for (size_t q = si; q < m->n_secs; q++)
                if (!strcmp(tok, m->secs[q].name))
                    return fail(m, k->line, DLB_ERR_INPUT, "layer '%s': input "
                                "'%s' is %s; a layer reads earlier layers "
                                "only (or net)", L->name, tok,
                                q == si ? "the layer itself"
                                        : "a later layer");
            /* the nearest of the names it could be */
            const char **names = malloc((n_prev + 1) * sizeof *names);
            if (names) {
                for (size_t p = 0; p < n_prev; p++)
                    names[p] = spec->layers[p].name;
                names[n_prev] = "net";
                did_you_mean(hint, sizeof hint, tok, names, n_prev + 1);
                free(names);
            }
            return fail(m, k->line, DLB_ERR_INPUT, "layer '%s': input '%s' is "
                        "no earlier layer%s", L->name, tok, hint);
        }
        L->inputs[L->n_inputs++] = j;
    }
    if (L->n_inputs == 0)
        return fail(m, k->line, DLB_ERR_INPUT, "layer '%s': input = '%s' "
                    "names no layer", L->name, k->value);
    return DLB_OK;
}

/* ---- [net] ------------------------------------------------------------ */

static const char *const net_keys[] = { "input", "classes", "loss" };

/* Parse `count` unsigned integers in [lo, 65536] separated by 'x'; strtoul
 * rather than sscanf, whose overflow behaviour is undefined. */
static int parse_dims(const char *v, uint32_t *out, int count, uint32_t lo)
{
    for (int i = 0; i < count; i++) {
        char *end;
        if (*v < '0' || *v > '9')
            return 0;
        unsigned long x = strtoul(v, &end, 10);
        if (x < lo || x > 65536 || *end != (i + 1 < count ? 'x' : '\0'))
            return 0;
        out[i] = (uint32_t)x;
        v = end + (i + 1 < count);
    }
    return 1;
}

static dlb_status read_net(struct mf *m, const struct mf_section *s,
                           struct dlb_model_spec *spec)
{
    char hint[96];
    struct mf_key *k;
    if (strcmp(s->name, "net") != 0)
        return fail(m, s->line, DLB_ERR_INPUT, "the first section must be "
                    "[net] (input, classes, loss), not [%s]", s->name);
    if (check_duplicates(m, s))
        return m->st;
    for (size_t i = s->first; i < s->first + s->n; i++) {
        const char *n = m->keys[i].name;
        if (strcmp(n, "input") && strcmp(n, "classes") && strcmp(n, "loss"))
            return fail(m, m->keys[i].line, DLB_ERR_INPUT, "[net] has no key "
                        "'%s'%s", n, did_you_mean(hint, sizeof hint, n,
                                                   net_keys, 3));
    }
    if (!(k = find_key(m, s, "input")))
        return fail(m, s->line, DLB_ERR_INPUT, "[net] needs 'input = CxHxW', "
                    "e.g. input = 1x28x28");
    uint32_t dims[3];
    if (!parse_dims(k->value, dims, 3, 1))
        return fail(m, k->line, DLB_ERR_INPUT, "[net]: input = '%s'; expected "
                    "CxHxW with each from 1 to 65536, e.g. 1x28x28", k->value);
    spec->in_c = dims[0], spec->in_h = dims[1], spec->in_w = dims[2];
    if (!(k = find_key(m, s, "classes")))
        return fail(m, s->line, DLB_ERR_INPUT, "[net] needs 'classes = N'");
    if (!parse_dims(k->value, &spec->classes, 1, 2))
        return fail(m, k->line, DLB_ERR_INPUT, "[net]: classes = '%s'; expected "
                    "an integer from 2 to 65536", k->value);
    static const char *const losses[] = { "nll", "cross_entropy" };
    k = find_key(m, s, "loss");
    spec->loss = DLB_LOSS_NLL;
    if (k && !strcmp(k->value, "cross_entropy"))
        spec->loss = DLB_LOSS_CROSS_ENTROPY;
    else if (k && strcmp(k->value, "nll") != 0)
        return fail(m, k->line, DLB_ERR_INPUT, "[net]: loss = '%s'; expected "
                    "nll (after a logsoftmax layer) or cross_entropy (on the "
                    "last layer's logits)%s", k->value,
                    did_you_mean(hint, sizeof hint, k->value, losses, 2));
    return DLB_OK;
}

/* ---- putting it together -------------------------------------------- */

/* loss = cross_entropy: the logits' logsoftmax as a layer of its own, as
 * PyTorch's cross_entropy computes it inside, so that the training step
 * and inference are nll's. */
static dlb_status add_softmax(struct mf *m, struct dlb_model_spec *spec)
{
    const struct dlb_layer_spec *prev = &spec->layers[spec->n_layers - 1];
    struct dlb_layer_spec *L = &spec->layers[spec->n_layers];
    if (prev->kind == DLB_LAYER_LOGSOFTMAX)
        return fail(m, prev->line, DLB_ERR_INPUT, "layer '%s': loss = "
                    "cross_entropy takes the logits and adds the logsoftmax "
                    "itself; remove this layer or say loss = nll", prev->name);
    for (size_t i = 0; i < spec->n_layers; i++)
        if (!strcmp(spec->layers[i].name, "cross_entropy"))
            return fail(m, spec->layers[i].line, DLB_ERR_INPUT, "layer "
                        "'cross_entropy': the name is the loss's own layer "
                        "with loss = cross_entropy; rename it");
    memset(L, 0, sizeof *L);
    L->kind = DLB_LAYER_LOGSOFTMAX;
    snprintf(L->name, sizeof L->name, "cross_entropy");
    L->line = m->secs[0].line;
    spec->n_layers++;
    return (m->st = dlb_model_layer_infer(spec, spec->n_layers - 1, m->err));
}

static dlb_status build(struct mf *m, struct dlb_model_spec *spec)
{
    if (m->n_secs == 0)
        return fail(m, 1, DLB_ERR_INPUT, "no sections; a model file starts "
                    "with [net]");
    if (read_net(m, &m->secs[0], spec))
        return m->st;
    if (m->n_secs < 2)
        return fail(m, m->secs[0].line, DLB_ERR_INPUT, "[net] has no layers "
                    "after it");
    /* one more for cross_entropy's own logsoftmax */
    spec->layers = calloc(m->n_secs, sizeof *spec->layers);
    if (!spec->layers)
        return fail(m, 1, DLB_ERR_NOMEM, "out of memory");
    for (size_t i = 1; i < m->n_secs; i++) {
        const struct mf_section *s = &m->secs[i];
        struct dlb_layer_spec *L = &spec->layers[spec->n_layers++];
        for (size_t j = 0; j < i; j++)
            if (!strcmp(m->secs[j].name, s->name))
                return fail(m, s->line, DLB_ERR_INPUT, "section [%s] repeats "
                            "line %d; give each layer its own name, e.g. "
                            "[%s2]", s->name, m->secs[j].line, s->name);
        snprintf(L->name, sizeof L->name, "%s", s->name);
        L->line = s->line;
        if (check_duplicates(m, s) || layer_keys(m, s, L) ||
            read_inputs(m, i, spec, L))
            return m->st;
        if ((m->st = dlb_model_layer_infer(spec, i - 1, m->err)))
            return m->st;
    }
    if (spec->loss == DLB_LOSS_CROSS_ENTROPY && add_softmax(m, spec))
        return m->st;
    const struct dlb_layer_spec *last = &spec->layers[spec->n_layers - 1];
    for (size_t i = 0; i + 1 < spec->n_layers; i++)
        if (spec->layers[i].kind == DLB_LAYER_LOGSOFTMAX)
            return fail(m, spec->layers[i].line, DLB_ERR_INPUT, "layer '%s': "
                        "logsoftmax must be the last layer (it feeds the nll "
                        "loss)", spec->layers[i].name);
    if (last->kind != DLB_LAYER_LOGSOFTMAX)
        return fail(m, last->line, DLB_ERR_INPUT, "layer '%s': loss = nll needs "
                    "a logsoftmax as the last layer, this is %s", last->name,
                    dlb_layer_kind_name(last->kind));
    if ((m->st = dlb_model_spec_check_uses(spec, m->err)))
        return m->st;
    if (last->out_c != spec->classes)
        return fail(m, last->line, DLB_ERR_INPUT, "layer '%s': gives %u class "
                    "scores but [net] has classes = %u", last->name,
                    last->out_c, spec->classes);
    return DLB_OK;
}

void dlb_model_spec_free(struct dlb_model_spec *spec)
{
    if (!spec)
        return;
    free(spec->path);
    free(spec->layers);
    dlb_model_weights_unref(spec->weights);
    free(spec);
}

dlb_status dlb_model_file_parse(const char *name, const char *text, size_t len,
                                struct dlb_model_spec **out,
                                struct dlb_error *err)
{
    struct mf m = { .file = name, .buf = text, .len = len, .err = err };
    struct dlb_model_spec *spec = calloc(1, sizeof *spec);
    *out = NULL;
    if (!spec || !(spec->path = strdup(name))) {
        free(spec);
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", name);
    }
    if (!read_ini(&m))
        build(&m, spec);
    for (size_t i = 0; i < m.n_keys; i++) {
        free(m.keys[i].name);
        free(m.keys[i].value);
    }
    free(m.keys);
    free(m.secs);
    if (m.st != DLB_OK) {
        dlb_model_spec_free(spec);
        return m.st;
    }
    *out = spec;
    return DLB_OK;
}

dlb_status dlb_model_file_load(const char *path, struct dlb_model_spec **out,
                               struct dlb_error *err)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    dlb_status s;
    *out = NULL;
    if (!f)
        return dlb_errorf(err, DLB_ERR_IO, "%s: cannot open the model file: %s",
                          path, strerror(errno));
    if (dlb_onnx_is_path(path)) {
        fclose(f);
        return dlb_onnx_load(path, out, err);
    }
    do {
        if (len == cap) {
            char *nb = realloc(buf, cap = cap ? 2 * cap : 4096);
            if (!nb) {
                free(buf);
                fclose(f);
                return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", path);
            }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    if (ferror(f)) {
        free(buf);
        fclose(f);
        return dlb_errorf(err, DLB_ERR_IO, "%s: read error", path);
    }
    fclose(f);
    s = dlb_model_file_parse(path, buf, len, out, err);
    free(buf);
    return s;
}
