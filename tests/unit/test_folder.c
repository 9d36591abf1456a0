/* Image folders as data sets: classes are the sorted subfolders, files
 * sorted, the test split a held-out sixth or a test/ folder; images decode
 * to the model's shape with the labels of their folders; a batch is the
 * same for the same seed, whoever fills it; a corrupt file is counted,
 * said once and stood in for by the next one; a folder with nothing
 * decodable is an error. */
#define _POSIX_C_SOURCE 200809L

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "data/augment.h"
#include "data/batches.h"
#include "data/dataset.h"
#include "data/folder.h"
#include "util/rng.h"

static char root[512];

/* A 16x16 grey PNG at dir/name, every pixel `v`. */
static void write_png(const char *dir, const char *name, uint8_t v)
{
    char path[1024];
    uint8_t px[256];
    png_image im;
    memset(px, v, sizeof px);
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    im.width = im.height = 16;
    im.format = PNG_FORMAT_GRAY;
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK(png_image_write_to_file(&im, path, 0, px, 0, NULL));
}

static void write_text(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs("garbage", f) >= 0 && fclose(f) == 0);
}

/* root/a/, root/b/, root/c/: 7 images each, pixel value 10*class + i;
 * "b" is written first so that order on disk is not the sorted one. */
static void make_flat(const char *top)
{
    static const char *const cls[] = {"b", "a", "c"};
    char dir[1024], name[64];
    mkdir(top, 0755);
    for (int k = 0; k < 3; k++) {
        snprintf(dir, sizeof dir, "%s/%s", top, cls[k]);
        int label = cls[k][0] - 'a';
        for (int i = 6; i >= 0; i--) {
            snprintf(name, sizeof name, "img%02d.png", i);
            write_png(dir, name, (uint8_t)(100 + 10 * label + i));
        }
    }
    snprintf(dir, sizeof dir, "%s/a", top);
    write_text(dir, "notes.txt"); /* not an image name: ignored */
}

static const struct dlb_data_want want = {1, 8, 8, 10};

/* The byte value image k of d decodes to (its pixels are all one value). */
static int value_of(const struct dlb_dataset *d, uint32_t k, int32_t *label)
{
    float px[64];
    CHECK(dlb_folder_fill(d, k, 0, 0, px, label) == DLB_OK);
    return (int)((px[0] * d->std + d->mean) * 255.0f + 0.5f);
}

static void test_layout(void)
{
    char top[600];
    struct dlb_dataset tr, te;
    struct dlb_error err = {""};
    int32_t label;
    snprintf(top, sizeof top, "%s/flat", root);
    make_flat(top);

    CHECK(dlb_folder_open(top, 1, &want, &tr, &err) == DLB_OK);
    CHECK(dlb_folder_open(top, 0, &want, &te, &err) == DLB_OK);
    /* 7 per class: 6 train, the 6th (img05) held out */
    CHECK(tr.n == 18 && te.n == 3 && tr.classes == 3 && te.classes == 3);
    CHECK(tr.c == 1 && tr.h == 8 && tr.w == 8 && tr.images == NULL);
    CHECK(strstr(tr.description, "3 classes") && strstr(tr.description, "1x8x8"));
    CHECK(value_of(&tr, 0, &label) == 100 && label == 0);     /* a/img00 */
    CHECK(value_of(&tr, 5, &label) == 106 && label == 0);     /* a/img06 */
    CHECK(value_of(&tr, 6, &label) == 110 && label == 1);     /* b/img00 */
    CHECK(value_of(&te, 2, &label) == 125 && label == 2);     /* c/img05 */
    CHECK(tr.labels[17] == 2 && te.labels[0] == 0);
    /* normalisation from the training split's pixels: mean of the values */
    CHECK(tr.mean == te.mean && tr.std == te.std);
    CHECK(tr.mean > 100 / 255.0f && tr.mean < 127 / 255.0f && tr.std > 0);
    CHECK(dlb_folder_corrupt(tr.folder) == 0);
    dlb_dataset_free(&tr);
    dlb_dataset_free(&te);

    /* train/ and test/ beside each other: the splits as they are */
    char split[700], dir[800];
    snprintf(split, sizeof split, "%s/split", root);
    mkdir(split, 0755);
    snprintf(dir, sizeof dir, "%s/train", split);
    make_flat(dir);
    snprintf(dir, sizeof dir, "%s/test/c", split);
    mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/test", split);
    mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/test/c", split);
    write_png(dir, "x.png", 7);
    CHECK(dlb_folder_open(split, 1, &want, &tr, &err) == DLB_OK);
    CHECK(dlb_folder_open(split, 0, &want, &te, &err) == DLB_OK);
    CHECK(tr.n == 21 && te.n == 1 && te.labels[0] == 2);
    CHECK(value_of(&te, 0, &label) == 7 && label == 2);
    dlb_dataset_free(&tr);
    dlb_dataset_free(&te);
    /* a test class the training split lacks */
    snprintf(dir, sizeof dir, "%s/test/zebra", split);
    write_png(dir, "z.png", 9);
    CHECK(dlb_folder_open(split, 0, &want, &te, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "test/zebra: a test class the training split"));

    /* more classes than the model has; a shape images cannot give */
    const struct dlb_data_want two = {1, 8, 8, 2}, four = {4, 8, 8, 10};
    CHECK(dlb_folder_open(top, 1, &two, &tr, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "3 classes; the model has 2"));
    CHECK(dlb_folder_open(top, 1, &four, &tr, &err) == DLB_ERR_INPUT);
    CHECK(dlb_folder_open(top, 1, NULL, &tr, &err) == DLB_ERR_INPUT);
    /* no class folders */
    snprintf(dir, sizeof dir, "%s/empty", root);
    mkdir(dir, 0755);
    CHECK(dlb_folder_open(dir, 1, &want, &tr, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "no class folders"));
    /* through the data set resolver */
    char mode[700];
    snprintf(mode, sizeof mode, "folder:%s", top);
    CHECK(dlb_dataset_open_for(mode, NULL, 1, 1, &want, &tr, NULL, 0, &err) ==
          DLB_OK);
    CHECK(tr.n == 18 && tr.folder != NULL);
    dlb_dataset_free(&tr);
}

struct said {
    int lines;
    char last[1200];
};

static void log_line(void *ctx, const char *line)
{
    struct said *s = ctx;
    s->lines++;
    snprintf(s->last, sizeof s->last, "%s", line);
}

static void test_corrupt(void)
{
    char top[600], dir[700];
    struct dlb_dataset tr;
    struct dlb_error err = {""};
    struct said said = {0, ""};
    int32_t label;
    snprintf(top, sizeof top, "%s/bad", root);
    make_flat(top);
    snprintf(dir, sizeof dir, "%s/b", top);
    write_text(dir, "img00.png"); /* b's first: index 6 of the training split */

    CHECK(dlb_folder_open(top, 1, &want, &tr, &err) == DLB_OK);
    dlb_folder_set_log(tr.folder, log_line, &said);
    /* the sample for the normalisation may have met it already; the
     * count is of distinct files either way */
    uint32_t before = dlb_folder_corrupt(tr.folder);
    CHECK(before <= 1);
    /* b/img00 is replaced by b/img01, its label b's */
    CHECK(value_of(&tr, 6, &label) == 111 && label == 1);
    CHECK(value_of(&tr, 6, &label) == 111);
    CHECK(dlb_folder_corrupt(tr.folder) == 1);
    CHECK(said.lines == (before ? 0 : 1));
    if (said.lines)
        CHECK(strstr(said.last, "/bad/b/img00.png") &&
              strstr(said.last, "neither a PNG nor a JPEG"));

    /* through a batch fill, in parallel or not: the same images */
    uint32_t idx[4] = {6, 0, 7, 17};
    float a[4 * 64], b[4 * 64];
    int32_t la[4], lb[4];
    struct dlb_rng r1, r2;
    dlb_rng_seed(&r1, 3);
    dlb_rng_seed(&r2, 3);
    CHECK(dlb_batch_fill(&tr, idx, 4, 1, &r1, a, la) == DLB_OK);
    CHECK(dlb_batch_fill_par(&tr, idx, 4, 1, &r2, b, lb) == DLB_OK);
    CHECK(memcmp(a, b, sizeof a) == 0 && memcmp(la, lb, sizeof la) == 0);
    CHECK(la[0] == 1 && la[1] == 0 && la[3] == 2);
    CHECK(dlb_folder_corrupt(tr.folder) == 1);
    dlb_dataset_free(&tr);

    /* nothing decodes: an error at open, naming the folder */
    snprintf(top, sizeof top, "%s/allbad", root);
    mkdir(top, 0755);
    snprintf(dir, sizeof dir, "%s/a", top);
    mkdir(dir, 0755);
    for (int i = 0; i < 8; i++) {
        char name[32];
        snprintf(name, sizeof name, "%d.jpg", i);
        write_text(dir, name);
    }
    CHECK(dlb_folder_open(top, 1, &want, &tr, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "none of the") && strstr(err.msg, "decodes"));
    CHECK(dlb_folder_open(top, 0, &want, &tr, &err) == DLB_ERR_INPUT);
}

/* Augmented crops differ between batches of one image and repeat for the
 * same draw stream (seed, epoch, batch). */
static void test_augment(void)
{
    char dir[700];
    struct dlb_dataset tr;
    struct dlb_error err = {""};
    snprintf(dir, sizeof dir, "%s/ramp/a", root);
    char top[700];
    snprintf(top, sizeof top, "%s/ramp", root);
    mkdir(top, 0755);
    mkdir(dir, 0755);
    uint8_t px[40 * 40];
    for (int i = 0; i < 40 * 40; i++)
        px[i] = (uint8_t)((i % 40) * 5 + (i / 40));
    for (int i = 0; i < 6; i++) {
        char path[800];
        png_image im;
        memset(&im, 0, sizeof im);
        im.version = PNG_IMAGE_VERSION;
        im.width = im.height = 40;
        im.format = PNG_FORMAT_GRAY;
        snprintf(path, sizeof path, "%s/%d.png", dir, i);
        CHECK(png_image_write_to_file(&im, path, 0, px, 0, NULL));
    }
    const struct dlb_data_want w32 = {1, 32, 32, 10};
    CHECK(dlb_folder_open(top, 1, &w32, &tr, &err) == DLB_OK);
    static float a[32 * 32], b[32 * 32], c[32 * 32];
    uint32_t k = 0;
    int differ = 0;
    CHECK(dlb_batches_fill(&tr, &k, 1, 1, 5, 0, 0, a, NULL, 0) == DLB_OK);
    CHECK(dlb_batches_fill(&tr, &k, 1, 1, 5, 0, 0, b, NULL, 1) == DLB_OK);
    CHECK(memcmp(a, b, sizeof a) == 0);
    for (uint64_t batch = 1; batch < 8; batch++) {
        CHECK(dlb_batches_fill(&tr, &k, 1, 1, 5, 0, batch, c, NULL, 0) == DLB_OK);
        differ |= memcmp(a, c, sizeof a) != 0;
    }
    CHECK(differ);
    /* without augmentation: the centre of the image scaled to 32x32 */
    CHECK(dlb_batches_fill(&tr, &k, 1, 0, 5, 0, 0, a, NULL, 0) == DLB_OK);
    CHECK(dlb_batches_fill(&tr, &k, 1, 0, 5, 0, 3, b, NULL, 0) == DLB_OK);
    CHECK(memcmp(a, b, sizeof a) == 0);
    dlb_dataset_free(&tr);
}

static void rm_tree(const char *path)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    CHECK(system(cmd) == 0);
}

int main(void)
{
    check_temp_template(root, sizeof root, "dlb-test-folder-XXXXXX");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    test_layout();
    test_corrupt();
    test_augment();
    rm_tree(root);
    return check_exit();
}
