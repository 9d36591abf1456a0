#!/bin/sh
# Data at the model's input shape, end to end on the real binary:
# Fashion-MNIST-shaped IDX files (made here, 64 training and 32 test
# images) zero-padded to 32x32 for resnet20 and mobilenet-v2-32, said in
# results.json, the report and on the console; refused for a 3-channel
# model when asked for by name; and synthetic data at 3x224x224 for
# resnet18 under dataset = auto, with the reason.
. "${top_srcdir:-.}/tests/integration/lib.sh"

python3 - <<'PY' || exit 1
import gzip, os, random, struct
random.seed(7)
os.mkdir("fm")
for split, n in (("train", 64), ("t10k", 32)):
    with gzip.open("fm/%s-images-idx3-ubyte.gz" % split, "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 28, 28))
        f.write(bytes(random.randrange(1, 256) for _ in range(n * 784)))
    with gzip.open("fm/%s-labels-idx1-ubyte.gz" % split, "wb") as f:
        f.write(struct.pack(">II", 0x801, n))
        f.write(bytes(i % 10 for i in range(n)))
PY

# oneDNN where it is built (much faster at 224), else the reference.
backend=ref
"$DLBENCH" list 2>/dev/null | grep -q '^  cpu  *available' && backend=cpu

printf '%s\n' '[suite]' 'name = data-shapes' 'mode = train' 'model = resnet20' \
    'dataset = fashion-mnist' "dataset_path = $T/fm" "backend = $backend" \
    'train_steps = 2' 'batch = 4' 'warmup = 0s' 'time_cap = 0.05s' \
    'min_samples = 2' 'timeout = 300s' >shapes.ini

ds() { json "$1/results.json" "d['records'][0]['dataset']$2"; }

for m in resnet20 mobilenet-v2-32; do
    "$DLBENCH" --suite shapes.ini --set model=$m --out "$m" >"$m.out" 2>"$m.err"
    ok "$m: padded Fashion-MNIST trains (exit 0)" [ $? -eq 0 ]
    ok "$m: the record is ok" [ "$(status_of "$m/results.json" default)" = ok ]
    ok "$m: results.json says padded" \
        [ "$(ds "$m" "['description']")" = "Fashion-MNIST padded 28x28 -> 32x32" ]
    ok "$m: from 28x28 to 1x32x32" \
        [ "$(ds "$m" "['padded_from']")/$(ds "$m" "['shape']")" = "[28, 28]/[1, 32, 32]" ]
    ok "$m: both splits counted" \
        [ "$(ds "$m" "['train_images']")/$(ds "$m" "['test_images']")" = 64/32 ]
    ok "$m: not synthetic" [ "$(ds "$m" "['synthetic']")" = False ]
    ok "$m: the run's context lists it" [ "$(json "$m/results.json" \
        "d['context']['datasets'][0]['description']")" = "Fashion-MNIST padded 28x28 -> 32x32" ]
    ok "$m: the report says it" grep -q \
        '^- data: Fashion-MNIST padded 28x28 -\\> 32x32, 64 training and 32 test images' \
        "$m/report.md"
    ok "$m: the console says it" grep -q "note: default: data: Fashion-MNIST padded \
28x28 -> 32x32, 64 training and 32 test images" "$m.err"
    ok "$m: accuracy scored on the 32 test images" [ "$(json "$m/results.json" \
        "int(d['records'][0]['metrics']['test_images']['value'])")" -eq 32 ]
    ok "$m: records round-trip" round_trips "$m"
done

# One channel into a 3-channel model, asked for by name: refused.
"$DLBENCH" --suite shapes.ini --set model=resnet18 --out rgb >rgb.out 2>rgb.err
ok "1x28x28 data for a 3x224x224 model: exit 2" [ $? -eq 2 ]
ok "... naming both shapes" grep -q "the model takes 3x224x224 images in 1000 \
classes; the data set .*fm/train-images-idx3-ubyte.gz has 64 of 1x28x28 in 10 \
classes; fix dataset_path or the model (the channels must agree)" rgb.err

# Under auto the files do not fit resnet18: synthetic at its shape, said
# everywhere. Speed figures only (no accuracy run) keep it to a few steps.
if [ "$backend" = cpu ]; then
    "$DLBENCH" --suite shapes.ini --set model=resnet18 --set dataset=auto \
        --set batch=2 --set measure_only=on --out r18 >r18.out 2>r18.err
    ok "resnet18 on synthetic 3x224x224: exit 0" [ $? -eq 0 ]
    ok "resnet18: the record is ok" [ "$(status_of r18/results.json default)" = ok ]
    ok "resnet18: results.json says synthetic at its shape" \
        [ "$(ds r18 "['description']")/$(ds r18 "['synthetic']")" = \
          "synthetic 3x224x224 (seed 42)/True" ]
    ok "resnet18: the count bound (256 MiB a split)" \
        [ "$(ds r18 "['train_images']")/$(ds r18 "['test_images']")" = 1783/297 ]
    ds r18 "['synthetic_because']" >why.txt
    ok "resnet18: why synthetic" grep -q \
        "1x28x28 images in .* do not fit the model's 3x224x224 input" why.txt
    ok "resnet18: the console warns" grep -q "warning: default: data: synthetic \
3x224x224 (seed 42), 1783 training and 297 test images (.*do not fit.*); the \
figures of quality are not those of real images" r18.err
    ok "resnet18: the report says synthetic" grep -q "^- data: synthetic 3x224x224 \
(seed 42), 1783 training and 297 test images (synthetic" r18/report.md
else
    echo "no cpu backend: resnet18 at 224 is left to test_dataset_shape" >&2
fi
finish
