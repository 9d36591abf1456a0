#!/bin/sh
# Benchmark, run by hand on a quiet machine (not part of `make check`: the
# full run takes 10-20 minutes on 2 cores, and its ratios mean something
# only where nothing else runs): dlbench against PyTorch on the CPU, on
# exactly dlbench's networks. The PyTorch side (tests/bench/vs_pytorch.py)
# builds each chain network layer by layer from the same model file dlbench
# reads (suites/models/lenet.ini, vgg-small.ini) and checks that its
# parameter count and its FLOPs on the shapes PyTorch produces equal
# dlbench's. For the reference networks (suites/models/resnet50.ini,
# resnet18.ini, mobilenet-v2.ini at 3x224x224) it runs torchvision's own
# definitions, random weights, and checks that the parameter counts agree.
#
#   top_srcdir=. sh tests/bench/vs-pytorch.sh [--rounds N] [--quick]
#       [--dlbench PATH] [--venv DIR] [--threads N] [--no-compile]
#       [--channels-last] [--only NAME,...] [--out DIR]
#
# Workloads, one row each (synthetic data, the same batch, thread count,
# seed, learning rate and momentum on both sides; SGD with momentum as
# suites/baseline.ini):
#   LeNet training fp32 at batch 64, 256, 1024 (samples/s);
#   LeNet inference at batch 1 (median latency, us), 256 and 1024
#   (samples/s); vgg-small training fp32 and bf16 at batch 256, inference
#   fp32 and bf16 at batch 256 (samples/s); ResNet-50 and MobileNetV2
#   training fp32 and bf16 at batch 32, ResNet-18 training fp32 at batch
#   32 (samples/s; synthetic 3x224x224 images on both sides, dlbench's
#   share of the fp32 peak printed where its record has one). These five
#   take a few minutes a round: --quick leaves them out unless --only
#   names them, and each runs at least 1 warm-up step and 5 timed ones.
# Inference of the reference networks against PyTorch and onnxruntime, on
# the same torchvision weights exported to ONNX, is tests/bench/onnx-perf.sh.
# PyTorch runs eagerly, and with torch.compile for LeNet training at 256
# and LeNet inference at 256 and 1024 (the better of the two is its best
# batch). bf16 training: dlbench's amp plugin (bf16, no loss scaling)
# against torch.autocast; bf16 inference: the whole network in bf16 on
# both sides, as dlbench's amp runs it.
#
# Each round runs every workload once per side, one process at a time,
# never two at once; the side that goes first alternates between rounds,
# so that a drift of the machine falls on both. The table gives each
# cell's median over the rounds and the range between rounds.
#
# Options:
#   --rounds N      rounds (default 3)
#   --quick         a smoke test: LeNet only, 0.1 s warm-up, 0.5 s samples
#   --dlbench PATH  the dlbench binary (default: $DLBENCH, else
#                   $BUILD/dlbench, BUILD defaulting to $top_srcdir/build)
#   --venv DIR      the virtual environment for PyTorch (default: python3
#                   when it imports torch, else vs-pytorch-venv in
#                   dlbench's cache directory, ~/.cache/dlbench unless
#                   DLBENCH_CACHE_DIR or XDG_CACHE_HOME say otherwise);
#                   made and filled with pip when it has no torch
#   --threads N     threads on both sides (default: the allowed CPUs)
#   --no-compile    leave torch.compile out
#   --channels-last PyTorch with NHWC activations and weights (default:
#                   its default layout, NCHW, as a model runs unless told);
#                   run both to have PyTorch's best layout per row
#   --only LIST     the workloads named, comma-separated (--list shows
#                   them); with --quick too, vgg-small's included
#   --out DIR       where the runs go (default: a new directory in $TMPDIR)
# DLBENCH_PLUGIN_PATH is where the amp plugin is looked for (default: the
# plugins/.libs beside the binary, as in a build directory).
#
# Exit status: 0 every cell measured and both sides' networks the same,
# 1 a cell failed or the networks differ, 2 bad usage or no dlbench, 77
# (skip) PyTorch cannot be had.
set -u
: "${top_srcdir:=$(dirname "$0")/../..}"
rounds=3
quick=0
dlbench=${DLBENCH:-}
venv=
threads=
compile=yes
layout=
only=
out=${OUT:-}
list=0

usage() {
    sed -n '/^#   top_srcdir/,/^#       \[--channels-last/p' "$0" | sed 's/^# *//' >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --dlbench) [ $# -ge 2 ] || usage; dlbench=$2; shift 2 ;;
    --venv) [ $# -ge 2 ] || usage; venv=$2; shift 2 ;;
    --threads) [ $# -ge 2 ] || usage; threads=$2; shift 2 ;;
    --no-compile) compile=no; shift ;;
    --channels-last) layout=--channels-last; shift ;;
    --only) [ $# -ge 2 ] || usage; only=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    --list) list=1; shift ;;
    -h|--help) usage ;;
    *) echo "vs-pytorch.sh: unknown option '$1'" >&2; usage ;;
    esac
done
case $rounds in ''|*[!0-9]*|0) echo "vs-pytorch.sh: --rounds needs a whole number above 0" >&2; exit 2 ;; esac

# The workloads: name, label, figure (samples/s or us), model, mode, batch,
# precision, whether torch.compile runs too, and torchvision's name of the
# network (- : PyTorch builds it from the model file).
workloads() {
    cat <<'EOF'
lenet-train-64	LeNet train fp32 batch 64	samples	lenet	train	64	fp32	no	-
lenet-train-256	LeNet train fp32 batch 256	samples	lenet	train	256	fp32	yes	-
lenet-train-1024	LeNet train fp32 batch 1024	samples	lenet	train	1024	fp32	no	-
lenet-infer-1	LeNet infer fp32 batch 1	us	lenet	infer	1	fp32	no	-
lenet-infer-256	LeNet infer fp32 batch 256	samples	lenet	infer	256	fp32	yes	-
lenet-infer-1024	LeNet infer fp32 batch 1024	samples	lenet	infer	1024	fp32	yes	-
vgg-train-256	vgg-small train fp32 batch 256	samples	vgg-small	train	256	fp32	no	-
vgg-train-bf16-256	vgg-small train bf16 batch 256	samples	vgg-small	train	256	bf16	no	-
vgg-infer-256	vgg-small infer fp32 batch 256	samples	vgg-small	infer	256	fp32	no	-
vgg-infer-bf16-256	vgg-small infer bf16 batch 256	samples	vgg-small	infer	256	bf16	no	-
resnet50-train-32	ResNet-50 train fp32 batch 32	samples	resnet50	train	32	fp32	no	resnet50
resnet50-train-bf16-32	ResNet-50 train bf16 batch 32	samples	resnet50	train	32	bf16	no	resnet50
resnet18-train-32	ResNet-18 train fp32 batch 32	samples	resnet18	train	32	fp32	no	resnet18
mobilenet-v2-train-32	MobileNetV2 train fp32 batch 32	samples	mobilenet-v2	train	32	fp32	no	mobilenet_v2
mobilenet-v2-train-bf16-32	MobileNetV2 train bf16 batch 32	samples	mobilenet-v2	train	32	bf16	no	mobilenet_v2
EOF
}
if [ "$list" -eq 1 ]; then
    workloads | cut -f1,2
    exit 0
fi

# ---- dlbench -------------------------------------------------------------
top=$(cd "$top_srcdir" && pwd) || exit 2
if [ -z "$dlbench" ]; then
    dlbench=${BUILD:-$top/build}/dlbench
fi
if [ ! -x "$dlbench" ]; then
    echo "vs-pytorch.sh: no dlbench at $dlbench; build it, or give --dlbench PATH (or DLBENCH)" >&2
    exit 2
fi
# The amp plugin, for bf16: in a build directory it lies in plugins/.libs.
if [ -z "${DLBENCH_PLUGIN_PATH:-}" ] && [ -d "$(dirname "$dlbench")/plugins/.libs" ]; then
    DLBENCH_PLUGIN_PATH=$(cd "$(dirname "$dlbench")/plugins/.libs" && pwd)
    export DLBENCH_PLUGIN_PATH
fi
if [ -z "$threads" ]; then
    threads=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))' 2>/dev/null || nproc)
fi

# ---- PyTorch -------------------------------------------------------------
# A Python that imports torch: the one given, python3 itself, or the
# default virtual environment; failing those, one made and filled now.
has_torch() { "$1" -c 'import torch, torchvision' >/dev/null 2>&1; }
cache=${DLBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dlbench}
py=
if [ -z "$venv" ] && has_torch python3; then
    py=python3
else
    venv=${venv:-$cache/vs-pytorch-venv}
    if [ -x "$venv/bin/python" ] && has_torch "$venv/bin/python"; then
        py=$venv/bin/python
    fi
fi
if [ -z "$py" ]; then
    echo "vs-pytorch.sh: PyTorch (torch, torchvision) is not installed; installing it with pip into $venv (PyTorch's CPU-only wheel first, else PyPI's default one, which brings CUDA libraries: about 5 GB)" >&2
    if ! python3 -m venv "$venv" >&2; then
        echo "vs-pytorch.sh: SKIP: could not create a virtual environment in $venv with 'python3 -m venv' (on Debian: apt-get install python3-venv); or give --venv DIR of one that has torch" >&2
        exit 77
    fi
    # PyTorch's own index has the CPU-only wheel, several times smaller than
    # PyPI's default, which brings CUDA libraries; PyPI is the fallback.
    # numpy only because torch warns at import without it.
    if ! "$venv/bin/pip" install torch torchvision numpy --index-url https://download.pytorch.org/whl/cpu >&2; then
        echo "vs-pytorch.sh: the CPU-only index failed; trying PyPI's default torch" >&2
        "$venv/bin/pip" install torch torchvision numpy >&2
    fi
    if ! has_torch "$venv/bin/python"; then
        echo "vs-pytorch.sh: SKIP: pip could not install torch and torchvision into $venv (no network, or no wheel for this Python/platform); install torch for python3, or into a venv given with --venv DIR, and run again" >&2
        exit 77
    fi
    py=$venv/bin/python
fi

# ---- the run directory ------------------------------------------------------
out=${out:-$(mktemp -d "${TMPDIR:-/tmp}/vs-pytorch.XXXXXX")}
mkdir -p "$out/suites" "$out/dlbench" "$out/pytorch" || exit 2
echo "$rounds" >"$out/rounds"
if [ "$quick" -eq 1 ]; then
    warmup=0.1 cap=0.5 min_samples=5
else
    warmup=1 cap=6 min_samples=10
fi
# Learning rate, momentum and seed as dlbench's baseline suite trains.
sgd=$(python3 - "$top/suites/baseline.ini" <<'PY'
import configparser, sys
c = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
c.read(sys.argv[1])
s = c["suite"]
print(s["lr"], s["momentum"], s["seed"])
PY
) || exit 2
read -r lr momentum seed <<EOF
$sgd
EOF

# The workloads this run measures, in the format vs_pytorch.py report reads.
: >"$out/workloads.tsv"
workloads | while IFS='	' read -r name label unit model mode batch prec comp tv; do
    if [ -n "$only" ]; then
        case ",$only," in *",$name,"*) ;; *) continue ;; esac
    elif [ "$quick" -eq 1 ] && [ "$model" != lenet ]; then
        continue
    fi
    [ "$compile" = no ] && comp=no
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$label" "$unit" \
        "$top/suites/models/$model.ini" "$mode" "$batch" "$prec" "$comp" "$tv" \
        >>"$out/workloads.tsv"
done
if [ ! -s "$out/workloads.tsv" ]; then
    echo "vs-pytorch.sh: no workload left to run (--only '$only'; --list shows the names)" >&2
    exit 2
fi

# One suite of one configuration per workload. The model is the file's
# path, the same file the PyTorch side reads. Training measures only
# (train_steps = 0: no accuracy run). Inference needs trained weights,
# which dlbench trains once and caches; how far they were trained does not
# change the work of a step, so a short training (50 steps) does.
while IFS='	' read -r name label unit model mode batch prec comp tv; do
    steps=0
    [ "$mode" = infer ] && steps=50
    # A reference network's step takes seconds: fewer samples, still a median.
    n_min=$min_samples
    [ "$tv" != - ] && [ "$n_min" -gt 5 ] && n_min=5
    {
        cat <<EOF
; vs-pytorch.sh: $label
[suite]
name = vs-pytorch-$name
mode = $mode
model = $model
dataset = synthetic
backend = cpu
batch = $batch
threads = $threads
lr = $lr
momentum = $momentum
seed = $seed
train_steps = $steps
measure_only = on
warmup = ${warmup}s
time_cap = ${cap}s
min_samples = $n_min
timeout = 1800s
EOF
        if [ "$prec" = bf16 ]; then
            # bf16 has fp32's exponent range: no loss scaling, as the amp suite.
            printf '\n[amp]\nprecision = bf16\nloss_scale = none\n'
        fi
    } >"$out/suites/$name.ini"
done <"$out/workloads.tsv"

# ---- the rounds ---------------------------------------------------------------
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $threads threads; run directory $out" >&2
run_dlbench() { # NAME ROUND
    "$dlbench" run "$out/suites/$1.ini" --format json --out "$out/dlbench/$1-r$2" \
        </dev/null >/dev/null 2>"$out/dlbench/$1-r$2.err"
    echo "  dlbench $1: exit $?" >&2
}
run_pytorch() { # NAME ROUND MODEL MODE BATCH PRECISION COMPILE TORCHVISION
    variants=eager
    [ "$7" = yes ] && variants=eager,compile
    net= n_min=$min_samples n_warm=5
    if [ "$8" != - ]; then
        net="--torchvision $8" n_warm=1
        [ "$n_min" -gt 5 ] && n_min=5
    fi
    # shellcheck disable=SC2086 # layout and net are empty or one option
    "$py" "$top/tests/bench/vs_pytorch.py" measure --model "$3" --mode "$4" \
        --batch "$5" --precision "$6" --threads "$threads" --variants "$variants" $layout $net \
        --warmup "$warmup" --time-cap "$cap" --min-samples "$n_min" --warmup-steps "$n_warm" \
        --lr "$lr" --momentum "$momentum" --seed "$seed" \
        --json "$out/pytorch/$1-r$2.json" </dev/null >/dev/null 2>"$out/pytorch/$1-r$2.err"
    echo "  PyTorch $1 ($variants): exit $?" >&2
}
round=1
while [ "$round" -le "$rounds" ]; do
    echo "round $round of $rounds" >&2
    while IFS='	' read -r name label unit model mode batch prec comp tv; do
        if [ $((round % 2)) -eq 1 ]; then
            run_dlbench "$name" "$round"
            run_pytorch "$name" "$round" "$model" "$mode" "$batch" "$prec" "$comp" "$tv"
        else
            run_pytorch "$name" "$round" "$model" "$mode" "$batch" "$prec" "$comp" "$tv"
            run_dlbench "$name" "$round"
        fi
    done <"$out/workloads.tsv"
    round=$((round + 1))
done

"$py" "$top/tests/bench/vs_pytorch.py" report "$out"
status=$?
echo "runs in $out"
exit $status
