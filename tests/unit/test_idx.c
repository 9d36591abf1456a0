/* IDX reading and dataset loading: good files (gzip'ed and plain) read back
 * exactly; each kind of bad file is refused with a message that names the
 * file and the fault; the installed Fashion-MNIST, when present, has the
 * shape and statistics the rest of dlbench assumes. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "data/dataset.h"
#include "data/idx.h"

static char tmpdir[256];

static void path_in(char *buf, size_t len, const char *dir, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

static void write_raw(const char *path, int gz, const uint8_t *bytes,
                      size_t len)
{
    if (gz) {
        gzFile f = gzopen(path, "wb");
        CHECK(f != NULL);
        if (!f)
            return;
        if (len)
            CHECK(gzwrite(f, bytes, (unsigned)len) == (int)len);
        CHECK(gzclose(f) == Z_OK);
    } else {
        FILE *f = fopen(path, "wb");
        CHECK(f != NULL);
        if (!f)
            return;
        if (len)
            CHECK(fwrite(bytes, 1, len, f) == len);
        CHECK(fclose(f) == 0);
    }
}

/* An IDX file: magic (type code, ndim), dims, then payload_len bytes of a
 * known pattern (byte i is i * 7 + 3) or of `payload` when given. */
static void write_idx(const char *path, int gz, uint8_t type, uint8_t ndim,
                      const uint32_t *dims, const uint8_t *payload,
                      size_t payload_len)
{
    size_t len = 4 + 4 * (size_t)ndim + payload_len;
    uint8_t *b = malloc(len);
    b[0] = 0;
    b[1] = 0;
    b[2] = type;
    b[3] = ndim;
    for (uint8_t i = 0; i < ndim; i++) {
        b[4 + 4 * i] = (uint8_t)(dims[i] >> 24);
        b[5 + 4 * i] = (uint8_t)(dims[i] >> 16);
        b[6 + 4 * i] = (uint8_t)(dims[i] >> 8);
        b[7 + 4 * i] = (uint8_t)dims[i];
    }
    for (size_t i = 0; i < payload_len; i++)
        b[4 + 4 * ndim + i] = payload ? payload[i] : (uint8_t)(i * 7 + 3);
    write_raw(path, gz, b, len);
    free(b);
}

/* Read `name` in tmpdir expecting failure with status `s` and a message
 * that is exactly "<path>: <tail>" (tail_exact) or contains `tail`. */
static void expect_fail(const char *name, uint32_t ndim, dlb_status s,
                        const char *tail, int tail_exact)
{
    char path[1024], want[2048];
    struct dlb_idx x;
    struct dlb_error err = { "" };

    path_in(path, sizeof path, tmpdir, name);
    CHECK(dlb_idx_read(path, ndim, &x, &err) == s);
    CHECK(x.data == NULL);
    CHECK(strncmp(err.msg, path, strlen(path)) == 0);
    if (tail_exact) {
        snprintf(want, sizeof want, "%s: %s", path, tail);
        CHECK(strcmp(err.msg, want) == 0);
    } else {
        CHECK(strstr(err.msg, tail) != NULL);
    }
    if (strncmp(err.msg, path, strlen(path)) != 0 ||
        (tail_exact ? strcmp(err.msg, want) != 0 : !strstr(err.msg, tail)))
        fprintf(stderr, "  message was: %s\n", err.msg);
}

static void test_roundtrip(int gz)
{
    const uint32_t dims[3] = { 3, 4, 5 };
    const uint32_t ldims[1] = { 3 };
    const uint8_t labels[3] = { 9, 0, 4 };
    char path[1024];
    struct dlb_idx x;
    struct dlb_error err = { "" };

    path_in(path, sizeof path, tmpdir, gz ? "img.gz" : "img");
    write_idx(path, gz, 0x08, 3, dims, NULL, 60);
    CHECK(dlb_idx_read(path, 3, &x, &err) == DLB_OK);
    CHECK(x.ndim == 3 && x.dims[0] == 3 && x.dims[1] == 4 && x.dims[2] == 5);
    CHECK(x.size == 60);
    int same = x.data != NULL;
    for (size_t i = 0; same && i < 60; i++)
        same = x.data[i] == (uint8_t)(i * 7 + 3);
    CHECK(same);
    dlb_idx_free(&x);
    CHECK(x.data == NULL);

    path_in(path, sizeof path, tmpdir, gz ? "lab.gz" : "lab");
    write_idx(path, gz, 0x08, 1, ldims, labels, 3);
    CHECK(dlb_idx_read(path, 1, &x, &err) == DLB_OK);
    CHECK(x.ndim == 1 && x.dims[0] == 3 && x.size == 3);
    CHECK(x.data && memcmp(x.data, labels, 3) == 0);
    dlb_idx_free(&x);
}

/* Payloads above the reader's first 1 MiB chunk take the growing path. */
static void test_large(void)
{
    const uint32_t dims[3] = { 3000, 28, 28 };
    char path[1024];
    struct dlb_idx x;
    struct dlb_error err = { "" };

    path_in(path, sizeof path, tmpdir, "large.gz");
    write_idx(path, 1, 0x08, 3, dims, NULL, 3000u * 784u);
    CHECK(dlb_idx_read(path, 3, &x, &err) == DLB_OK);
    CHECK(x.size == 3000u * 784u);
    int same = x.data != NULL;
    for (size_t i = 0; same && i < x.size; i++)
        same = x.data[i] == (uint8_t)(i * 7 + 3);
    CHECK(same);
    dlb_idx_free(&x);
}

static void test_corrupt_headers(void)
{
    const uint32_t dims[3] = { 3, 4, 5 };
    char path[1024];

    path_in(path, sizeof path, tmpdir, "magic.gz");
    {
        uint8_t b[16] = { 0x1f, 0x8b, 0x08, 0x03 };
        write_raw(path, 1, b, sizeof b);
    }
    expect_fail("magic.gz", 3, DLB_ERR_INPUT,
                "not an IDX file: magic number 0x1f8b0803, expected "
                "0x00000803 for images", 1);

    path_in(path, sizeof path, tmpdir, "float.gz");
    write_idx(path, 1, 0x0D, 3, dims, NULL, 240);
    expect_fail("float.gz", 3, DLB_ERR_INPUT,
                "IDX type code 0x0d (32-bit float) is not supported: images "
                "must be unsigned bytes (0x08)", 1);

    path_in(path, sizeof path, tmpdir, "odd.gz");
    write_idx(path, 1, 0x42, 1, dims, NULL, 3);
    expect_fail("odd.gz", 1, DLB_ERR_INPUT, "type code 0x42 (unknown)", 0);

    path_in(path, sizeof path, tmpdir, "ndim.gz");
    write_idx(path, 1, 0x08, 2, dims, NULL, 12);
    expect_fail("ndim.gz", 3, DLB_ERR_INPUT,
                "IDX file has 2 dimensions, expected 3 for images "
                "(magic 0x00000803)", 1);

    path_in(path, sizeof path, tmpdir, "zero.gz");
    {
        const uint32_t z[3] = { 3, 0, 5 };
        write_idx(path, 1, 0x08, 3, z, NULL, 0);
    }
    expect_fail("zero.gz", 3, DLB_ERR_INPUT,
                "dimension 1 is 0, expected 1 to 1048575", 1);

    path_in(path, sizeof path, tmpdir, "huge_dim.gz");
    {
        const uint32_t z[3] = { 1u << 20, 28, 28 };
        write_idx(path, 1, 0x08, 3, z, NULL, 0);
    }
    expect_fail("huge_dim.gz", 3, DLB_ERR_INPUT,
                "dimension 0 is 1048576, expected 1 to 1048575", 1);

    /* Each dimension sane, the product not: refused before any allocation
     * of that size. */
    path_in(path, sizeof path, tmpdir, "huge_total.gz");
    {
        const uint32_t z[3] = { 1000000, 100, 100 };
        write_idx(path, 1, 0x08, 3, z, NULL, 0);
    }
    expect_fail("huge_total.gz", 3, DLB_ERR_INPUT,
                "header declares 10000000000 bytes of pixels, above the "
                "2 GiB limit", 1);

    path_in(path, sizeof path, tmpdir, "short_header");
    {
        uint8_t b[7] = { 0, 0, 8, 3, 0, 0, 0 };
        write_raw(path, 0, b, sizeof b);
    }
    expect_fail("short_header", 3, DLB_ERR_INPUT,
                "truncated: expected 12 bytes of IDX dimensions, got 3", 1);

    path_in(path, sizeof path, tmpdir, "empty");
    write_raw(path, 0, NULL, 0);
    expect_fail("empty", 1, DLB_ERR_INPUT,
                "truncated: expected 4 bytes of IDX magic number, got 0", 1);
}

static void test_corrupt_payloads(void)
{
    const uint32_t dims[3] = { 3, 4, 5 };
    char path[1024];

    path_in(path, sizeof path, tmpdir, "trunc.gz");
    write_idx(path, 1, 0x08, 3, dims, NULL, 59);
    expect_fail("trunc.gz", 3, DLB_ERR_INPUT,
                "truncated: expected 60 bytes of pixels, got 59", 1);

    path_in(path, sizeof path, tmpdir, "trunc");
    write_idx(path, 0, 0x08, 3, dims, NULL, 10);
    expect_fail("trunc", 3, DLB_ERR_INPUT,
                "truncated: expected 60 bytes of pixels, got 10", 1);

    path_in(path, sizeof path, tmpdir, "labels_trunc.gz");
    write_idx(path, 1, 0x08, 1, dims, NULL, 2);
    expect_fail("labels_trunc.gz", 1, DLB_ERR_INPUT,
                "truncated: expected 3 bytes of labels, got 2", 1);

    path_in(path, sizeof path, tmpdir, "trailing.gz");
    write_idx(path, 1, 0x08, 3, dims, NULL, 65);
    expect_fail("trailing.gz", 3, DLB_ERR_INPUT,
                "5 trailing bytes after the 60 bytes of pixels the header "
                "declares", 1);

    path_in(path, sizeof path, tmpdir, "trailing");
    write_idx(path, 0, 0x08, 3, dims, NULL, 61);
    expect_fail("trailing", 3, DLB_ERR_INPUT,
                "1 trailing byte after the 60 bytes of pixels the header "
                "declares", 1);
}

static size_t slurp(const char *path, uint8_t *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = 0;
    CHECK(f != NULL);
    if (f) {
        n = fread(buf, 1, cap, f);
        fclose(f);
    }
    return n;
}

static void test_corrupt_gzip(void)
{
    const uint32_t dims[3] = { 20, 28, 28 };
    static uint8_t buf[1 << 16];
    char path[1024];

    /* Random-looking pixels so that the deflate stream is long enough to
     * damage in its middle. */
    uint8_t *px = malloc(20 * 784);
    uint32_t x = 12345;
    for (size_t i = 0; i < 20 * 784; i++) {
        x = x * 1103515245u + 12345u;
        px[i] = (uint8_t)(x >> 24) & 0x3f;
    }
    path_in(path, sizeof path, tmpdir, "bad_stream.gz");
    write_idx(path, 1, 0x08, 3, dims, px, 20 * 784);
    size_t n = slurp(path, buf, sizeof buf);
    CHECK(n > 1000);
    for (size_t i = n / 2; i < n / 2 + 16; i++)
        buf[i] ^= 0xa5;
    write_raw(path, 0, buf, n);
    expect_fail("bad_stream.gz", 3, DLB_ERR_INPUT, ": corrupt gzip stream", 0);

    /* A deflate block of the reserved type 3: a structural error. */
    path_in(path, sizeof path, tmpdir, "bad_block.gz");
    write_idx(path, 1, 0x08, 3, dims, px, 20 * 784);
    n = slurp(path, buf, sizeof buf);
    buf[10] |= 0x06; /* the first block header follows the 10-byte header */
    write_raw(path, 0, buf, n);
    expect_fail("bad_block.gz", 3, DLB_ERR_INPUT,
                "corrupt gzip stream: invalid block type", 1);

    /* A damaged CRC: the data decompress, the trailer check fails. */
    path_in(path, sizeof path, tmpdir, "bad_crc.gz");
    write_idx(path, 1, 0x08, 3, dims, px, 20 * 784);
    n = slurp(path, buf, sizeof buf);
    buf[n - 8] ^= 0xff;
    write_raw(path, 0, buf, n);
    expect_fail("bad_crc.gz", 3, DLB_ERR_INPUT,
                "corrupt gzip stream: incorrect data check", 1);

    /* A gzip file cut short (an interrupted download). */
    path_in(path, sizeof path, tmpdir, "cut.gz");
    write_idx(path, 1, 0x08, 3, dims, px, 20 * 784);
    n = slurp(path, buf, sizeof buf);
    write_raw(path, 0, buf, n / 2);
    expect_fail("cut.gz", 3, DLB_ERR_INPUT,
                "(gzip: unexpected end of file)", 0);
    expect_fail("cut.gz", 3, DLB_ERR_INPUT,
                "truncated: expected 15680 bytes of pixels, got", 0);
    free(px);
}

static void test_missing(void)
{
    expect_fail("no_such_file.gz", 3, DLB_ERR_IO,
                "cannot open: No such file or directory", 1);
    if (geteuid() != 0) { /* root reads anything */
        char path[1024];
        const uint32_t dims[1] = { 3 };
        path_in(path, sizeof path, tmpdir, "secret.gz");
        write_idx(path, 1, 0x08, 1, dims, NULL, 3);
        chmod(path, 0);
        expect_fail("secret.gz", 1, DLB_ERR_IO,
                    "cannot open: Permission denied", 1);
    }
}

/* A small train split in `dir`: n images of 2x3, m labels, label 0 = v. */
static void write_split(const char *dir, uint32_t n, uint32_t m, uint8_t v)
{
    char path[1024];
    const uint32_t dims[3] = { n, 2, 3 };
    uint8_t labels[16] = { 0 };
    labels[0] = v;
    mkdir(dir, 0700);
    path_in(path, sizeof path, dir, "train-images-idx3-ubyte.gz");
    write_idx(path, 1, 0x08, 3, dims, NULL, (size_t)n * 6);
    path_in(path, sizeof path, dir, "train-labels-idx1-ubyte.gz");
    write_idx(path, 1, 0x08, 1, &m, labels, m);
}

static void test_dataset_load(void)
{
    char dir[512], want[2048];
    struct dlb_dataset d;
    struct dlb_error err = { "" };

    path_in(dir, sizeof dir, tmpdir, "good");
    write_split(dir, 3, 3, 9);
    CHECK(dlb_dataset_load(dir, 1, &d, &err) == DLB_OK);
    CHECK(d.n == 3 && d.c == 1 && d.h == 2 && d.w == 3 && d.classes == 10);
    CHECK(d.labels[0] == 9 && d.images[1] == 10 && !d.synthetic);
    CHECK(d.mean == 0.2860f && d.std == 0.3530f);
    CHECK(d.source && strstr(d.source, "train-images-idx3-ubyte.gz"));
    dlb_dataset_free(&d);
    CHECK(d.images == NULL);

    /* The resolver's auto mode takes the files when they are there. */
    int announced = -1;
    CHECK(dlb_dataset_open("auto", dir, 1, 7, &d, &announced, &err) ==
          DLB_OK);
    CHECK(announced == 0 && !d.synthetic && d.n == 3);
    dlb_dataset_free(&d);

    path_in(dir, sizeof dir, tmpdir, "mismatch");
    write_split(dir, 3, 2, 0);
    CHECK(dlb_dataset_load(dir, 1, &d, &err) == DLB_ERR_INPUT);
    snprintf(want, sizeof want, "mismatched counts: %s/train-images-idx3-"
             "ubyte.gz has 3 images, %s/train-labels-idx1-ubyte.gz has 2 "
             "labels", dir, dir);
    CHECK(strcmp(err.msg, want) == 0);
    CHECK(d.images == NULL && d.labels == NULL);

    path_in(dir, sizeof dir, tmpdir, "range");
    write_split(dir, 3, 3, 10);
    CHECK(dlb_dataset_load(dir, 1, &d, &err) == DLB_ERR_INPUT);
    snprintf(want, sizeof want, "%s/train-labels-idx1-ubyte.gz: label 10 of "
             "item 0 is out of range: expected 0 to 9", dir);
    CHECK(strcmp(err.msg, want) == 0);

    /* The test split is missing from these directories. */
    CHECK(dlb_dataset_load(dir, 0, &d, &err) == DLB_ERR_IO);
    snprintf(want, sizeof want, "%s/t10k-images-idx3-ubyte.gz: No such file "
             "or directory; install Debian's dataset-fashion-mnist package "
             "or set dataset_path to a directory holding the Fashion-MNIST "
             "IDX files", dir);
    CHECK(strcmp(err.msg, want) == 0);
}

static void test_dataset_open(void)
{
    char dir[512], path[1024], want[2048];
    struct dlb_dataset d;
    struct dlb_error err = { "" };
    int announced = -1;

    path_in(dir, sizeof dir, tmpdir, "none");
    mkdir(dir, 0700);
    CHECK(dlb_dataset_open("auto", dir, 0, 7, &d, &announced, &err) ==
          DLB_OK);
    CHECK(announced == 1 && d.synthetic && d.n == DLB_SYNTHETIC_TEST_N);
    CHECK(d.source && strcmp(d.source, "synthetic (seed 7)") == 0);
    dlb_dataset_free(&d);

    CHECK(dlb_dataset_open("synthetic", dir, 1, 7, &d, &announced, &err) ==
          DLB_OK);
    CHECK(announced == 0 && d.synthetic && d.n == DLB_SYNTHETIC_TRAIN_N);
    dlb_dataset_free(&d);

    CHECK(dlb_dataset_open("fashion-mnist", dir, 1, 7, &d, &announced,
                           &err) == DLB_ERR_IO);
    CHECK(strstr(err.msg, "dataset-fashion-mnist") != NULL);
    CHECK(strstr(err.msg, "dataset_path") != NULL);

    CHECK(dlb_dataset_open("mnist", dir, 1, 7, &d, NULL, &err) ==
          DLB_ERR_INPUT);
    CHECK(strcmp(err.msg, "dataset 'mnist' is not one of auto, "
                          "fashion-mnist, synthetic, folder:PATH") == 0);

    /* Half an installation is an error, not a reason for synthetic data. */
    path_in(dir, sizeof dir, tmpdir, "half");
    write_split(dir, 3, 3, 0);
    path_in(path, sizeof path, dir, "train-labels-idx1-ubyte.gz");
    CHECK(unlink(path) == 0);
    CHECK(dlb_dataset_open("auto", dir, 1, 7, &d, &announced, &err) ==
          DLB_ERR_INPUT);
    snprintf(want, sizeof want, "%s/train-images-idx3-ubyte.gz exists but "
             "%s/train-labels-idx1-ubyte.gz does not; reinstall "
             "dataset-fashion-mnist, fix dataset_path or set dataset = "
             "synthetic", dir, dir);
    CHECK(strcmp(err.msg, want) == 0);
    CHECK(announced == 0);
}

/* The installed data set. Mean of x/255: 0.2860 is the training set's
 * figure (asserted within 0.001 on the training set); the test set's own
 * mean is 0.2868, asserted within 0.01 of 0.2860. */
static void test_fashion_mnist(void)
{
    const char *dir = DLB_DATASET_DEFAULT_DIR;
    struct stat st;
    struct dlb_dataset d;
    struct dlb_error err = { "" };

    if (stat(dir, &st) != 0) {
        fprintf(stderr, "%s absent: installed-data checks skipped\n", dir);
        return;
    }
    for (int train = 0; train <= 1; train++) {
        CHECK(dlb_dataset_load(dir, train, &d, &err) == DLB_OK);
        if (!d.images) {
            fprintf(stderr, "  %s\n", err.msg);
            continue;
        }
        CHECK(d.n == (train ? 60000u : 10000u));
        CHECK(d.c == 1 && d.h == 28 && d.w == 28 && d.classes == 10);
        uint32_t count[10] = { 0 };
        int in_range = 1;
        for (uint32_t i = 0; i < d.n; i++) {
            in_range &= d.labels[i] < 10;
            if (d.labels[i] < 10)
                count[d.labels[i]]++;
        }
        CHECK(in_range);
        for (int k = 0; k < 10; k++) /* both splits are balanced */
            CHECK(count[k] == d.n / 10);
        double sum = 0.0, sq = 0.0;
        size_t px = (size_t)d.n * 784;
        for (size_t i = 0; i < px; i++) {
            double v = d.images[i] / 255.0;
            sum += v;
            sq += v * v;
        }
        double mean = sum / (double)px;
        double std = sqrt(sq / (double)px - mean * mean);
        fprintf(stderr, "fashion-mnist %s: mean %.4f std %.4f\n",
                train ? "train" : "test", mean, std);
        CHECK(fabs(mean - 0.2860) < (train ? 0.001 : 0.01));
        if (train)
            CHECK(fabs(std - 0.3530) < 0.001);
        dlb_dataset_free(&d);
    }
}

/* Remove what the tests wrote: one directory level of files and folders. */
static void cleanup(const char *dir)
{
    char cmd[600];
    /* The names are ours and the path comes from mkdtemp: no quoting
     * hazards. */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/dlb_idx_XXXXXX",
             base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror(tmpdir);
        return 99; /* automake: hard error */
    }
    test_roundtrip(1);
    test_roundtrip(0);
    test_large();
    test_corrupt_headers();
    test_corrupt_payloads();
    test_corrupt_gzip();
    test_missing();
    test_dataset_load();
    test_dataset_open();
    test_fashion_mnist();
    cleanup(tmpdir);
    return check_exit();
}
