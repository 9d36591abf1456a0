#!/bin/sh
# dataset = folder:PATH end to end on the real binary: an image folder
# written by tests/data/make-image-folder (Fashion-MNIST, or its synthetic
# stand-in where it is not installed, as PNG and JPEG, with two corrupt
# files) trains LeNet with and without the dataloader plugin's two workers
# decoding it; the batches are the same either way, the corrupt files are
# counted in results.json and named once each in the log; a held-out
# layout of RGB images feeds a grey model; a folder with nothing
# decodable, or none at all, stops the run with exit status 2.
. "${top_srcdir:-.}/tests/integration/lib.sh"

MAKE_FOLDER="$top_builddir/tests/data/make-image-folder"
"$MAKE_FOLDER" --size 28 --train 16 --test 4 --corrupt 2 f28 2>make.err
ok "make-image-folder writes the folder" [ $? -eq 0 ]
ok "... 160 + 2 training files, 40 test files" [ "$(find f28/train -type f | wc -l)/$(find f28/test -type f | wc -l)" = 162/40 ]
ok "... PNG and JPEG both" sh -c "ls f28/train/3-dress | grep -q 'png\$' && ls f28/train/3-dress | grep -q 'jpg\$'"

printf '%s\n' '[suite]' 'name = data-folder' 'mode = train' 'model = lenet' \
    "dataset = folder:$T/f28" 'backend = ref' 'train_steps = 12' 'batch = 16' \
    'warmup = 0s' 'time_cap = 0.05s' 'min_samples = 2' 'timeout = 300s' \
    'plugins = dataloader' '' '[dataloader]' 'workers = 2' 'bench_images = 64' \
    '' '[sweep]' 'dataloader.enable = off, on' >folder.ini

"$DLBENCH" --suite folder.ini --out run >run.out 2>run.err
ok "LeNet on an image folder: exit 0" [ $? -eq 0 ]
for id in dataloader.enable=off dataloader.enable=on; do
    ok "$id: ok" [ "$(status_of run/results.json "$id")" = ok ]
done
rec() { json run/results.json "[r for r in d['records'] if r['id']=='dataloader.enable=$1'][0]$2"; }
ok "results.json: a folder" [ "$(rec on "['dataset']['kind']")" = folder ]
ok "results.json: its description" [ "$(rec on "['dataset']['description']")" = \
    "image folder $T/f28 (10 classes) at 1x28x28" ]
ok "results.json: the splits' sizes" \
    [ "$(rec on "['dataset']['train_images']")/$(rec on "['dataset']['test_images']")" = 162/40 ]
ok "results.json: 2 corrupt images" [ "$(rec on "['dataset']['corrupt_images']")" -eq 2 ]
ok "... without the loader too" [ "$(rec off "['dataset']['corrupt_images']")" -eq 2 ]
ok "the loader's workers decode the same batches as the step does" \
    [ "$(rec off "['metrics']['train_loss_last']['value']")" = \
      "$(rec on "['metrics']['train_loss_last']['value']")" ]
ok "the loader measured itself" [ "$(rec on "['metrics']['dataloader.loader_images_per_s']['value'] > 0")" = True ]
ok "accuracy on the 40 test images" [ "$(rec on "['metrics']['test_images']['value']")" = 40.0 ]
for f in 0-t-shirt/corrupt-0.jpg 1-trouser/corrupt-1.png; do
    for id in 0 1; do
        ok "log $id names $f once" [ "$(grep -c "skipping a corrupt image: $T/f28/train/$f" run/logs/config-$id.log)" -eq 1 ]
    done
done
ok "the console says the folder and its corrupt files" grep -q \
    "note: dataloader.enable=off: data: image folder $T/f28 (10 classes) at 1x28x28, 162 training and 40 test images (2 corrupt, skipped" run.err
ok "the report says it" grep -q "^- data: image folder .*162 training and 40 test images (2 corrupt" run/report.md
ok "records round-trip" round_trips run

# The loader's mmap source needs decoded bytes: a folder is refused in the
# configuration, with the reason, never a crash.
"$DLBENCH" --suite folder.ini --set dataloader.source=mmap --set dataloader.enable=on \
    --out mm >mm.out 2>mm.err
ok "dataloader.source = mmap on a folder: the configuration fails" \
    [ "$(json mm/results.json "d['records'][0]['status']")" = failed ]
ok "... saying why" grep -rq "source = mmap needs a data set held decoded in memory" mm/logs

# Held out: no test/ folder, every sixth file of a class is a test image;
# RGB JPEGs at 32x32 into LeNet's 1x28x28 (luma, scaled, centre-cropped).
"$MAKE_FOLDER" --size 32 --channels 3 --format jpeg --train 12 --test 0 rgb32 2>>make.err
head -12 folder.ini >plain.ini
"$DLBENCH" --suite plain.ini --set "dataset=folder:$T/rgb32" --set train_steps=3 \
    --out held >held.out 2>held.err
ok "held-out RGB folder: exit 0" [ $? -eq 0 ]
ok "held out: 100 training and 20 test images" [ "$(json held/results.json \
    "'%d/%d' % (d['records'][0]['dataset']['train_images'], d['records'][0]['dataset']['test_images'])")" = 100/20 ]
ok "held out: said in the description" grep -q "every sixth image held out" held/report.md

# Nothing decodable: exit 2 before any configuration runs.
mkdir -p bad/a bad/b
for i in 1 2 3 4 5 6 7; do echo junk >bad/a/$i.jpg; echo junk >bad/b/$i.png; done
"$DLBENCH" --suite plain.ini --set "dataset=folder:$T/bad" --out bad-run >bad.out 2>bad.err
ok "an undecodable folder: exit 2" [ $? -eq 2 ]
ok "... says none decodes" grep -q "none of the .* sampled training images decodes" bad.err
ok "... and runs nothing" [ ! -e bad-run/results.json ]
"$DLBENCH" --suite plain.ini --set "dataset=folder:$T/nowhere" --out no-run >no.out 2>no.err
ok "a missing folder: exit 2" [ $? -eq 2 ]
ok "... naming the key" grep -q "dataset = folder:$T/nowhere: .*No such file" no.err
"$DLBENCH" --suite plain.ini --set dataset=folder: --out e-run >e.out 2>e.err
ok "folder: without a path: exit 2" [ $? -eq 2 ]
ok "... with the choices" grep -q "expected one of auto, fashion-mnist, synthetic, folder:PATH" e.err
finish
