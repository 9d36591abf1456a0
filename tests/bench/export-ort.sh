#!/bin/sh
# Check, run by hand (not part of `make check`: it needs onnxruntime from
# PyPI): what `dlbench export` writes runs in onnxruntime and computes
# what dlbench computes. For each ONNX file (by default: a pruned and an
# int8 LeNet, made here by running tests/integration/suites/export-*.ini
# on ref with --quick and exporting them), a seeded random batch goes
# through dlbench (tests/bench/onnx_infer, inference on ref) and through
# onnxruntime (CPU), whose logits pass through log-softmax; printed: the
# largest difference, the top-1 agreement and the mean top
# log-probability of each. Bounds:
#
#   fp32 (pruned too):  |dlbench - ort| <= 1e-4 * max(1, |ort|), the same
#                       top-1 class for every image
#   QDQ (int8):         <= 0.1 * max(1, |ort|), 95% the same top-1 class:
#                       onnxruntime may run the pairs as its own int8
#                       kernels (QLinearConv), rounding where dlbench's
#                       fp32 simulation does not
#
#   top_srcdir=. sh tests/bench/export-ort.sh [FILE.onnx ...] [--build DIR]
#       [--venv DIR] [--batch N] [--out DIR]
#
#   --build DIR   the build directory (default $top_srcdir/build); its
#                 tests/bench/onnx_infer is made with `make bench` if absent
#   --venv DIR    a virtual environment with onnx, onnxruntime and numpy
#                 (default: python3 when it imports them, else ort-venv in
#                 dlbench's cache directory, made and filled with pip)
#   --batch N     images (default 64)
#   --out DIR     where runs, inputs and outputs go (default: a new
#                 directory in $TMPDIR)
#
# Exit status: 0 every file within its bounds, 1 one is not, 2 bad usage,
# no build or a run that failed, 77 (skip) onnxruntime cannot be had.
set -u
: "${top_srcdir:=$(dirname "$0")/../..}"
build=
venv=
batch=64
out=
files=

usage() {
    sed -n '/^#   top_srcdir/,/^#       \[--venv/p' "$0" | sed 's/^# *//' >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    --venv) [ $# -ge 2 ] || usage; venv=$2; shift 2 ;;
    --batch) [ $# -ge 2 ] || usage; batch=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "export-ort.sh: unknown option '$1'" >&2; usage ;;
    *) [ -f "$1" ] || { echo "export-ort.sh: $1: no such file" >&2; exit 2; }
       files="$files $(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; shift ;;
    esac
done
case $batch in '' | *[!0-9]*) echo "export-ort.sh: --batch is a whole number" >&2; exit 2 ;; esac

top=$(cd "$top_srcdir" && pwd) || exit 2
build=${build:-$top/build}
infer=$build/tests/bench/onnx_infer
if [ ! -x "$infer" ] && ! make -C "$build" tests/bench/onnx_infer >&2; then
    echo "export-ort.sh: no $infer; build dlbench in $build (or give --build DIR) and run 'make bench'" >&2
    exit 2
fi

# ---- onnxruntime ----------------------------------------------------------
has() { "$1" -c "import $2" >/dev/null 2>&1; }
cache=${DLBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dlbench}
py=
if [ -z "$venv" ] && has python3 'onnx, onnxruntime, numpy'; then
    py=python3
else
    venv=${venv:-$cache/ort-venv}
    if [ -x "$venv/bin/python" ] && has "$venv/bin/python" 'onnx, onnxruntime, numpy'; then
        py=$venv/bin/python
    fi
fi
if [ -z "$py" ]; then
    echo "export-ort.sh: installing onnx, onnxruntime and numpy with pip into $venv" >&2
    if ! python3 -m venv "$venv" >&2; then
        echo "export-ort.sh: SKIP: could not create a virtual environment in $venv (on Debian: apt-get install python3-venv); or give --venv DIR of one that has onnxruntime" >&2
        exit 77
    fi
    "$venv/bin/pip" install onnx onnxruntime numpy >&2
    if ! has "$venv/bin/python" 'onnx, onnxruntime, numpy'; then
        echo "export-ort.sh: SKIP: pip could not install onnxruntime into $venv (no network?)" >&2
        exit 77
    fi
    py=$venv/bin/python
fi

out=${out:-$(mktemp -d "${TMPDIR:-/tmp}/export-ort.XXXXXX")}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
echo "export-ort.sh: runs, inputs and outputs in $out" >&2

# ---- the default files: a pruned and an int8 LeNet, exported ----------
if [ -z "$files" ]; then
    export DLBENCH_PLUGIN_PATH="${DLBENCH_PLUGIN_PATH:-$build/plugins/.libs}"
    export DLBENCH_SUITE_PATH="${DLBENCH_SUITE_PATH:-$top/suites}"
    for kind in prune quant; do
        if ! "$build/dlbench" --suite "$top/tests/integration/suites/export-$kind.ini" \
                --quick --out "$out/run-$kind" >"$out/run-$kind.log" 2>&1 ||
           ! "$build/dlbench" export "$out/run-$kind" --out "$out/lenet-$kind.onnx"; then
            echo "export-ort.sh: the $kind run or its export failed (see $out/run-$kind.log)" >&2
            exit 2
        fi
        files="$files $out/lenet-$kind.onnx"
    done
fi

fails=0
for f in $files; do
    stem=$out/$(basename "$f" .onnx)
    tol=1e-4 agree=1
    if "$py" -c "import onnx, sys; sys.exit(0 if any(n.op_type == 'QuantizeLinear' for n in onnx.load(sys.argv[1]).graph.node) else 1)" "$f"; then
        tol=0.1 agree=0.95
    fi
    if ! "$py" "$top/tests/bench/export_ort.py" input "$f" "$batch" "$stem.in.f32" ||
       ! "$infer" "$f" ref "$stem.in.f32" "$stem.dlbench.f32"; then
        echo "export-ort.sh: $f: dlbench could not run it" >&2
        fails=$((fails + 1))
        continue
    fi
    "$py" "$top/tests/bench/export_ort.py" compare "$f" "$stem.in.f32" \
        "$stem.dlbench.f32" "$tol" "$agree" || fails=$((fails + 1))
done
[ "$fails" -eq 0 ]
exit $?
