/* Network description files: the shipped models parse with the shapes,
 * parameter counts and FLOPs worked out by hand below, and each broken file
 * under tests/unit/models/ fails with FILE:LINE and a message that says
 * what is wrong. Files are found under $srcdir (default "."). */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_file.h"

static void path_of(char *buf, size_t len, const char *rel)
{
    const char *srcdir = getenv("srcdir");
    snprintf(buf, len, "%s/%s", srcdir && *srcdir ? srcdir : ".", rel);
}

static struct dlb_model_spec *load(const char *rel)
{
    char path[4096];
    struct dlb_error err = { "" };
    struct dlb_model_spec *m = NULL;
    path_of(path, sizeof path, rel);
    if (dlb_model_file_load(path, &m, &err) != DLB_OK)
        fprintf(stderr, "%s\n", err.msg);
    return m;
}

static void check_shape(const struct dlb_layer_spec *L, const char *name,
                        uint32_t c, uint32_t h, uint32_t w)
{
    CHECK(strcmp(L->name, name) == 0);
    if (L->out_c != c || L->out_h != h || L->out_w != w)
        fprintf(stderr, "layer %s: %ux%ux%u, expected %ux%ux%u\n", L->name,
                L->out_c, L->out_h, L->out_w, c, h, w);
    CHECK(L->out_c == c && L->out_h == h && L->out_w == w);
}

/* LeNet, per image. Multiply-accumulates:
 *   conv1  10x24x24 outputs x (1*5*5)  = 5760 x 25   = 144,000
 *   conv2  20x8x8 outputs x (10*5*5)   = 1280 x 250  = 320,000
 *   fc1    320 x 50                                  =  16,000
 *   fc2    50 x 10                                   =     500
 *   total 480,500 MACs = 961,000 FLOPs (0.96 MFLOP; not 0.58).
 * Element-wise layers (one per element; pooling per window element;
 * logsoftmax 3 per element): pool1 1440*4 = 5760, relu1 1440, drop2 1280,
 * pool2 320*4 = 1280, relu2 320, relu3 50, drop3 50, logsoftmax 30:
 * 10,210. Forward 971,210. Backward: 2 x 961,000 + (max pools count their
 * outputs: 1440 + 320) + 1440 + 1280 + 320 + 50 + 50 + 30 = 1,926,930.
 * Parameters: 250+10 + 5000+20 + 16000+50 + 500+10 = 21,840 (the figure
 * PyTorch prints for its MNIST example's Net). */
static void test_lenet(void)
{
    struct dlb_model_spec *m = load("suites/models/lenet.ini");
    CHECK(m != NULL);
    if (!m)
        return;
    CHECK(m->in_c == 1 && m->in_h == 28 && m->in_w == 28 && m->classes == 10);
    CHECK(m->n_layers == 13);
    if (m->n_layers == 13) {
        const struct dlb_layer_spec *L = m->layers;
        check_shape(&L[0], "conv1", 10, 24, 24);
        check_shape(&L[1], "pool1", 10, 12, 12);
        check_shape(&L[2], "relu1", 10, 12, 12);
        check_shape(&L[3], "conv2", 20, 8, 8);
        check_shape(&L[4], "drop2", 20, 8, 8);
        CHECK(L[4].mode == DLB_DROPOUT_CHANNEL && L[4].p == 0.5f);
        check_shape(&L[5], "pool2", 20, 4, 4);
        CHECK(L[5].stride == 2 && L[5].kind == DLB_LAYER_MAXPOOL);
        check_shape(&L[7], "flatten", 320, 1, 1);
        check_shape(&L[8], "fc1", 50, 1, 1);
        CHECK(L[10].kind == DLB_LAYER_DROPOUT &&
              L[10].mode == DLB_DROPOUT_ELEMENT);
        check_shape(&L[11], "fc2", 10, 1, 1);
        CHECK(L[12].kind == DLB_LAYER_LOGSOFTMAX);
        CHECK(L[0].flops_fwd == 288000 && L[3].flops_fwd == 640000);
        CHECK(L[8].flops_fwd == 32000 && L[11].flops_fwd == 1000);
        CHECK(L[0].bias == 1 && L[0].stride == 1 && L[0].pad == 0);
    }
    CHECK(m->params == 21840);
    CHECK(m->flops_fwd == 971210);
    CHECK(m->flops_bwd == 1926930);
    printf("lenet: %zu layers, %llu parameters, %.0f FLOP forward, %.0f "
           "backward per image\n", m->n_layers,
           (unsigned long long)m->params, m->flops_fwd, m->flops_bwd);
    dlb_model_spec_free(m);
}

/* vgg-small, per image. Multiply-accumulates (3x3, pad 1):
 *   conv1 28*28*32*9*1   =   225,792     conv4 7*7*128*9*64  = 3,612,672
 *   conv2 14*14*64*9*32  = 3,612,672     conv5 7*7*128*9*128 = 7,225,344
 *   conv3 14*14*64*9*64  = 7,225,344     fc    128*10        =     1,280
 *   total 21,903,104 MACs = 43,806,208 FLOPs.
 * Element-wise: batchnorm 4 x (25088 + 12544 + 12544 + 6272 + 6272) =
 * 250,880; relu 62,720; pool1 6272*4 + pool2 3136*4 + gap 128*49 = 43,904;
 * logsoftmax 30. Forward 44,163,742 (44.2 MFLOP).
 * Parameters: convs 288+18432+36864+73728+147456 = 276,768 (no bias),
 * batchnorm 2*(32+64+64+128+128) = 832, fc 1290: 278,890. */
static void test_vgg_small(void)
{
    struct dlb_model_spec *m = load("suites/models/vgg-small.ini");
    CHECK(m != NULL);
    if (!m)
        return;
    CHECK(m->n_layers == 21);
    if (m->n_layers == 21) {
        const struct dlb_layer_spec *L = m->layers;
        check_shape(&L[0], "conv1", 32, 28, 28);
        check_shape(&L[3], "pool1", 32, 14, 14);
        check_shape(&L[7], "conv3", 64, 14, 14);
        check_shape(&L[10], "pool2", 64, 7, 7);
        check_shape(&L[14], "conv5", 128, 7, 7);
        check_shape(&L[17], "gap", 128, 1, 1);
        check_shape(&L[18], "flatten", 128, 1, 1);
        check_shape(&L[19], "fc", 10, 1, 1);
        CHECK(L[1].kind == DLB_LAYER_BATCHNORM && L[1].eps == 1e-5f &&
              L[1].momentum == 0.1f);
        CHECK(L[0].bias == 0 && L[0].pad == 1);
    }
    CHECK(m->params == 278890);
    CHECK(m->flops_fwd == 44163742);
    CHECK(m->flops_fwd > 20e6 && m->flops_fwd < 50e6);
    printf("vgg-small: %zu layers, %llu parameters, %.0f FLOP forward, %.0f "
           "backward per image\n", m->n_layers,
           (unsigned long long)m->params, m->flops_fwd, m->flops_bwd);
    dlb_model_spec_free(m);
}

struct bad_case {
    const char *file;
    int line;
    const char *says;
};

static const struct bad_case bad_cases[] = {
    { "bad-kernel.ini", 16,
      "layer 'conv2': kernel 5 larger than padded input 3x3" },
    { "bad-type.ini", 7, "unknown type 'convv' (did you mean 'conv'?)" },
    { "bad-key.ini", 8, "no key 'filter' (did you mean 'filters'?)" },
    { "bad-pool.ini", 6, "layer 'pool': window 5 larger than padded input 4x4" },
    { "bad-flatten.ini", 12,
      "layer 'fc': linear needs a flat input but gets 4x24x24" },
    { "bad-net.ini", 2, "the first section must be [net]" },
    { "bad-dup.ini", 9, "section [relu] repeats line 6" },
    { "bad-classes.ini", 13, "gives 5 class scores but [net] has classes = 10" },
    { "bad-value.ini", 8, "filters = '-3'; expected an integer from 1 to 65536" },
    { "bad-syntax.ini", 7, "malformed line" },
    { "bad-missing.ini", 6, "layer 'conv1': conv needs 'size = ...'" },
    { "bad-notype.ini", 6, "layer 'relu1': no 'type = ...'" },
    { "bad-last.ini", 9, "needs a logsoftmax as the last layer" },
    { "bad-mode.ini", 8,
      "mode = 'chanel'; expected element or channel (did you mean 'channel'?)" },
    { "bad-input.ini", 3, "input = '28x28'; expected CxHxW" },
    { "bad-channel-flat.ini", 9, "layer 'drop': dropout needs a c x h x w input" },
};

static void test_bad_files(void)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const struct bad_case *c = &bad_cases[i];
        char rel[256], path[4096], where[4200];
        struct dlb_error err = { "" };
        struct dlb_model_spec *m = NULL;
        snprintf(rel, sizeof rel, "tests/unit/models/%s", c->file);
        path_of(path, sizeof path, rel);
        snprintf(where, sizeof where, "%s:%d: ", path, c->line);
        CHECK(dlb_model_file_load(path, &m, &err) == DLB_ERR_INPUT);
        CHECK(m == NULL);
        if (strncmp(err.msg, where, strlen(where)) != 0 ||
            !strstr(err.msg, c->says)) {
            fprintf(stderr, "%s: got \"%s\"\n  expected \"%s...%s\"\n", c->file,
                    err.msg, where, c->says);
            check_failures++;
        }
        check_count++;
        dlb_model_spec_free(m);
    }
}

/* Cases that need no file of their own. */
static void test_text_cases(void)
{
    static const struct {
        const char *text;
        const char *says;
    } cases[] = {
        { "input = 1x2x2\n[net]\n", "t.ini:1: key 'input' before any section" },
        { "[net]\ninput = 1x4x4\nclasses = 2\n[f]\ntype = flatten\ntype = relu\n",
          "t.ini:6: [f]: key 'type' is set twice (first on line 5)" },
        { "[net]\ninput = 1x4x4\nclases = 2\n",
          "t.ini:3: [net] has no key 'clases' (did you mean 'classes'?)" },
        { "[net]\ninput = 1x4x4\nclasses = 2\n", "t.ini:1: [net] has no layers" },
        { "", "t.ini:1: no sections" },
        { "[net]\ninput = 2x4x4\nclasses = 8\n[f]\ntype = flatten\n"
          "[sm]\ntype = logsoftmax\n[r]\ntype = relu\n",
          "t.ini:6: layer 'sm': logsoftmax must be the last layer" },
        /* Keys are read by the suites' typed reader, with this file's
         * words: choices as written (case and on/off are suite-file
         * forms), integers in decimal. */
        { "[net]\ninput = 1x4x4\nclasses = 2\n[d]\ntype = dropout\n"
          "mode = Channel\n",
          "t.ini:6: layer 'd': mode = 'Channel'; expected element or channel "
          "(did you mean 'channel'?)" },
        { "[net]\ninput = 1x4x4\nclasses = 2\n[c]\ntype = conv\nfilters = 2\n"
          "size = 3\nbias = on\n",
          "t.ini:8: layer 'c': bias = 'on'; expected 0 or 1" },
        { "[net]\ninput = 1x4x4\nclasses = 2\n[c]\ntype = conv\nfilters = 2\n"
          "size = 2.5\n",
          "t.ini:7: layer 'c': size = '2.5'; expected an integer from 1 to 1024" },
        { "[net]\ninput = 1x4x4\nclasses = 2\n[b]\ntype = batchnorm\n"
          "eps = 1e-13\n",
          "t.ini:6: layer 'b': eps = '1e-13'; expected a number from 1e-12 to 1" },
        { "[net]\ninput = 1x4x4\nclasses = 2\n[b]\ntype = batchnorm\n"
          "epss = 1\n",
          "t.ini:6: layer 'b': batchnorm has no key 'epss' (did you mean 'eps'?)" },
        /* The graph: inputs name earlier layers or net, in one shape. */
        { "[net]\ninput = 1x4x4\nclasses = 2\n[a]\ntype = relu\n"
          "[b]\ntype = relu\ninput = c\n[c]\ntype = relu\n",
          "t.ini:8: layer 'b': input 'c' is a later layer; a layer reads "
          "earlier layers only (or net)" },
        { "[net]\ninput = 1x4x4\nclasses = 2\n[a]\ntype = relu\n"
          "input = a\n",
          "t.ini:6: layer 'a': input 'a' is the layer itself" },
        { "[net]\ninput = 1x4x4\nclasses = 2\n[conv1]\ntype = relu\n"
          "[b]\ntype = relu\ninput = conv2\n",
          "t.ini:8: layer 'b': input 'conv2' is no earlier layer (did you "
          "mean 'conv1'?)" },
        { "[net]\ninput = 1x4x4\nclasses = 2\n[a]\ntype = relu\n"
          "[s]\ntype = add\n",
          "t.ini:6: layer 's': add needs 'input = A, B'" },
        { "[net]\ninput = 1x4x4\nclasses = 2\n[a]\ntype = relu\n"
          "[s]\ntype = add\ninput = a\n",
          "t.ini:6: layer 's': add takes two or more inputs, 'input' names 1" },
        { "[net]\ninput = 1x4x4\nclasses = 2\n[a]\ntype = relu\n"
          "[r]\ntype = relu\ninput = a, net\n",
          "t.ini:6: layer 'r': relu takes one input, 'input' names 2" },
        { "[net]\ninput = 1x4x4\nclasses = 2\n[c]\ntype = conv\n"
          "filters = 2\nsize = 1\n[s]\ntype = add\ninput = c, net\n",
          "t.ini:8: layer 's': input 'net' is 1x4x4 but 'c' is 2x4x4; an add "
          "takes inputs of one shape" },
        { "[net]\ninput = 1x4x4\nclasses = 16\n[a]\ntype = relu\n"
          "[b]\ntype = relu\ninput = net\n[f]\ntype = flatten\n"
          "[sm]\ntype = logsoftmax\n",
          "t.ini:4: layer 'a': no later layer reads its output; name it in a "
          "later layer's 'input' or remove it" },
        { "[net]\ninput = 1x4x4\nclasses = 2\n[a]\ntype = relu\n"
          "[s]\ntype = add\ninput = a,a,a,a,a,a,a,a,a\n",
          "t.ini:8: layer 's': input names more than 8 layers" },
        { "[net]\ninput = 1x4x4\nclasses = 2\n[a]\ntype = relu\n"
          "inptu = net\n",
          "t.ini:6: layer 'a': relu has no key 'inptu' (did you mean "
          "'input'?)" },
        { "[net]\ninput = 1x4x4\nclasses = 2\n[a]\ntype = relu\n"
          "input = ,\n",
          "t.ini:6: layer 'a': input = ',' names no layer" },
        /* what the reference networks need */
        { "[net]\ninput = 6x4x4\nclasses = 2\n[c]\ntype = conv\n"
          "filters = 8\nsize = 1\ngroups = 4\n",
          "t.ini:4: layer 'c': groups = 4 must divide the 6 input channels "
          "and the 8 filters" },
        { "[net]\ninput = 2x4x4\nclasses = 2\n[c]\ntype = conv\n"
          "filters = 2\nsize = 1\ngroup = 2\n",
          "t.ini:8: layer 'c': conv has no key 'group' (did you mean "
          "'groups'?)" },
        { "[net]\ninput = 2x4x4\nclasses = 2\n[p]\ntype = avgpool\n"
          "size = 2\n[c]\ntype = concat\ninput = p, net\n",
          "t.ini:7: layer 'c': input 'net' is 4x4 but 'p' is 2x2; a concat "
          "joins channels of one height and width" },
        { "[net]\ninput = 2x4x4\nclasses = 2\n[c]\ntype = concat\n",
          "t.ini:4: layer 'c': concat needs 'input = A, B' naming the layers "
          "it joins" },
        { "[net]\ninput = 2x4x4\nclasses = 2\n[r]\ntype = relu\nmax = -1\n",
          "t.ini:6: layer 'r': max = '-1'; expected a number from 0 to 1e+06" },
        { "[net]\ninput = 2x4x4\nclasses = 2\nloss = crossentropy\n[f]\n"
          "type = flatten\n",
          "t.ini:4: [net]: loss = 'crossentropy'; expected nll (after a "
          "logsoftmax layer) or cross_entropy (on the last layer's logits) "
          "(did you mean 'cross_entropy'?)" },
        { "[net]\ninput = 2x1x1\nclasses = 2\nloss = cross_entropy\n[f]\n"
          "type = flatten\n[sm]\ntype = logsoftmax\n",
          "t.ini:7: layer 'sm': loss = cross_entropy takes the logits and "
          "adds the logsoftmax itself; remove this layer or say loss = nll" },
        { "[net]\ninput = 2x1x1\nclasses = 2\n[g]\ntype = global_avgpool\n"
          "[f]\ntype = flatten\n[s]\ntype = global_avgpool\n",
          "t.ini:8: layer 's': global_avgpool needs a c x h x w input" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dlb_error err = { "" };
        struct dlb_model_spec *m = NULL;
        CHECK(dlb_model_file_parse("t.ini", cases[i].text,
                                   strlen(cases[i].text), &m, &err) ==
              DLB_ERR_INPUT);
        if (!strstr(err.msg, cases[i].says)) {
            fprintf(stderr, "case %zu: got \"%s\", expected \"%s\"\n", i,
                    err.msg, cases[i].says);
            check_failures++;
        }
        check_count++;
    }
    /* Minimal valid file; flat input after flatten; pools default to
     * non-overlapping windows; a missing file is an I/O error. */
    const char *ok = "[net]\ninput = 3x5x5\nclasses = 3\n[p]\ntype = avgpool\n"
                     "size = 2\n[f]\ntype = flatten\n[sm]\ntype = logsoftmax\n";
    struct dlb_error err = { "" };
    struct dlb_model_spec *m = NULL;
    CHECK(dlb_model_file_parse("t.ini", ok, strlen(ok), &m, &err) ==
          DLB_ERR_INPUT); /* 3x2x2 = 12 scores, classes 3 */
    CHECK(strstr(err.msg, "gives 12 class scores") != NULL);
    CHECK(dlb_model_file_load("/nonexistent/x.ini", &m, &err) == DLB_ERR_IO);
    /* The keys' defaults and typed values. */
    const char *keys = "[net]\ninput = 2x8x8\nclasses = 2\n[c]\ntype = conv\n"
                       "filters = 3\nsize = 3\npad = +1\nbias = 0\n[b]\n"
                       "type = batchnorm\nmomentum = 0.25\n[d]\ntype = dropout\n"
                       "mode = channel\n[p]\ntype = maxpool\nsize = 2\n[f]\n"
                       "type = flatten\n[l]\ntype = linear\nout = 2\n[sm]\n"
                       "type = logsoftmax\n";
    CHECK(dlb_model_file_parse("t.ini", keys, strlen(keys), &m, &err) == DLB_OK);
    if (m) {
        const struct dlb_layer_spec *L = m->layers;
        CHECK(L[0].filters == 3 && L[0].size == 3 && L[0].stride == 1 &&
              L[0].pad == 1 && L[0].bias == 0);
        CHECK(L[1].eps == 1e-5f && L[1].momentum == 0.25f);
        CHECK(L[2].mode == DLB_DROPOUT_CHANNEL && L[2].p == 0.5f);
        CHECK(L[3].size == 2 && L[3].stride == 2 && L[3].pad == 0);
        CHECK(L[5].out == 2 && L[5].bias == 1);
    }
    dlb_model_spec_free(m);
    CHECK(strstr(err.msg, "/nonexistent/x.ini: cannot open") != NULL);
}

/* A residual block as the file says it: the inputs, the uses, the shapes
 * through the add and its FLOPs; a chain written with explicit inputs is
 * the same spec as without them. */
static void test_graph(void)
{
    const char *res =
        "[net]\ninput = 2x6x6\nclasses = 3\n"
        "[c1]\ntype = conv\nfilters = 4\nsize = 3\npad = 1\n"
        "[r1]\ntype = relu\n"
        "[c2]\ntype = conv\nfilters = 4\nsize = 3\npad = 1\n"
        "[sum]\ntype = add\ninput = c2, r1\n"
        "[skip]\ntype = conv\nfilters = 4\nsize = 1\ninput = net\n"
        "[sum2]\ntype = add\ninput = sum, skip, r1\n"
        "[f]\ntype = flatten\n[l]\ntype = linear\nout = 3\n"
        "[sm]\ntype = logsoftmax\n";
    struct dlb_error err = { "" };
    struct dlb_model_spec *m = NULL;
    CHECK(dlb_model_file_parse("r.ini", res, strlen(res), &m, &err) == DLB_OK);
    if (!m) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    const struct dlb_layer_spec *L = m->layers;
    CHECK(L[0].n_inputs == 1 && L[0].inputs[0] == DLB_LAYER_INPUT);
    CHECK(L[1].n_inputs == 1 && L[1].inputs[0] == 0);
    CHECK(L[3].kind == DLB_LAYER_ADD && L[3].n_inputs == 2 &&
          L[3].inputs[0] == 2 && L[3].inputs[1] == 1);
    CHECK(L[4].inputs[0] == DLB_LAYER_INPUT && L[4].in_c == 2);
    CHECK(L[5].n_inputs == 3 && L[5].inputs[2] == 1);
    CHECK(L[1].n_uses == 3 && L[2].n_uses == 1 && L[3].n_uses == 1 &&
          L[4].n_uses == 1 && L[7].n_uses == 1 && L[8].n_uses == 0);
    CHECK(L[5].out_c == 4 && L[5].out_h == 6 && L[5].flops_fwd == 2 * 4 * 36 &&
          L[5].flops_bwd == 0 && L[5].params == 0);
    CHECK(L[6].in_c == 4 && L[7].in_c == 4 * 36);
    CHECK(!dlb_model_spec_is_chain(m));
    CHECK(!dlb_model_spec_feeds_next(m, 1) && dlb_model_spec_feeds_next(m, 0));
    /* cuts: before c2 only r1's output may cross, but skip reads net;
     * before sum r1's output crosses beside c2's; before f nothing else */
    CHECK(dlb_model_spec_cut_reader(m, 2) == 4);
    CHECK(dlb_model_spec_cut_reader(m, 3) == 3);
    CHECK(dlb_model_spec_cut_reader(m, 6) == m->n_layers);
    CHECK(dlb_model_spec_reshape(m, &err) == DLB_OK && L[1].n_uses == 3);
    dlb_model_spec_free(m);

    const char *plain = "[net]\ninput = 1x8x8\nclasses = 2\n[c]\ntype = conv\n"
                        "filters = 2\nsize = 3\n[r]\ntype = relu\n[f]\n"
                        "type = flatten\n[l]\ntype = linear\nout = 2\n[sm]\n"
                        "type = logsoftmax\n";
    const char *named = "[net]\ninput = 1x8x8\nclasses = 2\n[c]\ntype = conv\n"
                        "filters = 2\nsize = 3\ninput = net\n[r]\ntype = relu\n"
                        "input = c\n[f]\ntype = flatten\ninput = r\n[l]\n"
                        "type = linear\nout = 2\ninput = f\n[sm]\n"
                        "type = logsoftmax\ninput = l\n";
    struct dlb_model_spec *a = NULL, *b = NULL;
    CHECK(dlb_model_file_parse("p.ini", plain, strlen(plain), &a, &err) == 0);
    CHECK(dlb_model_file_parse("p.ini", named, strlen(named), &b, &err) == 0);
    if (a && b) {
        CHECK(a->n_layers == b->n_layers && dlb_model_spec_is_chain(a) &&
              dlb_model_spec_is_chain(b));
        for (size_t i = 0; i < a->n_layers; i++) {
            struct dlb_layer_spec x = a->layers[i], y = b->layers[i];
            x.line = y.line = 0;
            CHECK(!memcmp(&x, &y, sizeof x));
        }
    }
    dlb_model_spec_free(a);
    dlb_model_spec_free(b);
}

/* Grouped and depthwise convolutions, concatenation, the global average
 * pool, ReLU6 and cross-entropy on the logits: shapes, parameters, FLOPs. */
static void test_reference_layers(void)
{
    const char *t =
        "[net]\ninput = 8x6x6\nclasses = 5\nloss = cross_entropy\n"
        "[dw]\ntype = conv\nfilters = 8\nsize = 3\npad = 1\ngroups = 8\n"
        "bias = 0\n[r6]\ntype = relu\nmax = 6\n"
        "[g2]\ntype = conv\nfilters = 4\nsize = 1\ngroups = 2\n"
        "[cat]\ntype = concat\ninput = g2, r6\n"
        "[gap]\ntype = global_avgpool\n[f]\ntype = flatten\n"
        "[fc]\ntype = linear\nout = 5\n";
    struct dlb_error err = { "" };
    struct dlb_model_spec *m = NULL;
    CHECK(dlb_model_file_parse("g.ini", t, strlen(t), &m, &err) == DLB_OK);
    if (!m) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    const struct dlb_layer_spec *L = m->layers;
    CHECK(m->n_layers == 8 && m->loss == DLB_LOSS_CROSS_ENTROPY);
    CHECK(L[0].groups == 8 && L[0].params == 8 * 1 * 9 &&
          L[0].flops_fwd == 2.0 * 8 * 36 * 9);
    CHECK(L[1].relu_max == 6.0f);
    CHECK(L[2].groups == 2 && L[2].params == 4 * 4 + 4 &&
          L[2].flops_fwd == 2.0 * 4 * 36 * 4);
    CHECK(L[3].kind == DLB_LAYER_CONCAT && L[3].in_c == 12 &&
          L[3].out_c == 12 && L[3].out_h == 6 && L[3].flops_fwd == 0);
    CHECK(L[4].out_c == 12 && L[4].out_h == 1 && L[4].out_w == 1 &&
          L[4].flops_fwd == 12 * 36 && !L[4].flat_out);
    CHECK(L[5].out_c == 12 && L[6].out_c == 5);
    CHECK(L[7].kind == DLB_LAYER_LOGSOFTMAX &&
          !strcmp(L[7].name, "cross_entropy") && L[7].in_c == 5 &&
          L[7].inputs[0] == 6 && L[7].line == 1);
    CHECK(L[1].n_uses == 2 && L[2].n_uses == 1);
    dlb_model_spec_free(m);
}

int main(void)
{
    test_lenet();
    test_vgg_small();
    test_bad_files();
    test_text_cases();
    test_graph();
    test_reference_layers();
    return check_exit();
}
