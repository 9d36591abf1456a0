#!/bin/sh
# Check, run by hand (not part of `make check`: it needs PyTorch,
# torchvision and onnxruntime from PyPI): dlbench's inference of ONNX
# models agrees with the framework that made them. PyTorch exports
# torchvision's ResNet-18 and MobileNetV2 (random weights, seeded, with
# random batch-norm statistics so that the logits differ, eval mode)
# with torch.onnx.export at opset 17; dlbench imports each .onnx and runs
# inference on ref and cpu on a fixed random batch; its
# log-probabilities must match PyTorch's and onnxruntime's within
#
#   |dlbench - peer| <= 1e-3 * max(1, |peer|)   for every value,
#
# with the same top-1 class for every image (fp32 through 20 to 50 layers
# whose sums run in different orders: observed differences are under
# 1e-5 on ref and cpu).
#
#   top_srcdir=. sh tests/bench/onnx-vs-torch.sh [--build DIR] [--venv DIR]
#       [--size S] [--batch N] [--backends ref,cpu] [--out DIR]
#
#   --build DIR     the build directory (default $top_srcdir/build); its
#                   tests/bench/onnx_infer is made with `make bench` if absent
#   --venv DIR      a virtual environment with torch, torchvision and
#                   onnxruntime (default: python3 when it imports them,
#                   else onnx-venv in dlbench's cache directory, made and
#                   filled with pip: CPU wheels)
#   --size S        image height and width (default 224)
#   --batch N       images (default 2)
#   --backends L    dlbench backends, comma-separated (default ref,cpu)
#   --out DIR       where models, inputs and outputs go (default: a new
#                   directory in $TMPDIR)
#
# Exit status: 0 every comparison within the tolerance, 1 one is not, 2 bad
# usage or no build, 77 (skip) PyTorch, torchvision or onnxruntime cannot
# be had. onnxruntime is compared where it imports; without it the check
# is against PyTorch alone and says so.
set -u
: "${top_srcdir:=$(dirname "$0")/../..}"
build=
venv=
size=224
batch=2
backends=ref,cpu
out=

usage() {
    sed -n '/^#   top_srcdir/,/^#       \[--size/p' "$0" | sed 's/^# *//' >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    --venv) [ $# -ge 2 ] || usage; venv=$2; shift 2 ;;
    --size) [ $# -ge 2 ] || usage; size=$2; shift 2 ;;
    --batch) [ $# -ge 2 ] || usage; batch=$2; shift 2 ;;
    --backends) [ $# -ge 2 ] || usage; backends=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "onnx-vs-torch.sh: unknown option '$1'" >&2; usage ;;
    esac
done
case $size$batch in *[!0-9]*) echo "onnx-vs-torch.sh: --size and --batch are whole numbers" >&2; exit 2 ;; esac

top=$(cd "$top_srcdir" && pwd) || exit 2
build=${build:-$top/build}
infer=$build/tests/bench/onnx_infer
if [ ! -x "$infer" ] && ! make -C "$build" tests/bench/onnx_infer >&2; then
    echo "onnx-vs-torch.sh: no $infer; build dlbench in $build (or give --build DIR) and run 'make bench'" >&2
    exit 2
fi

# ---- PyTorch, torchvision, onnxruntime ---------------------------------
has() { "$1" -c "import $2" >/dev/null 2>&1; }
cache=${DLBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dlbench}
py=
if [ -z "$venv" ] && has python3 'torch, torchvision, onnx'; then
    py=python3
else
    venv=${venv:-$cache/onnx-venv}
    if [ -x "$venv/bin/python" ] && has "$venv/bin/python" 'torch, torchvision, onnx'; then
        py=$venv/bin/python
    fi
fi
if [ -z "$py" ]; then
    echo "onnx-vs-torch.sh: installing torch, torchvision, onnx and onnxruntime with pip into $venv (CPU wheels)" >&2
    if ! python3 -m venv "$venv" >&2; then
        echo "onnx-vs-torch.sh: SKIP: could not create a virtual environment in $venv (on Debian: apt-get install python3-venv); or give --venv DIR of one that has torch" >&2
        exit 77
    fi
    "$venv/bin/pip" install torch torchvision --index-url https://download.pytorch.org/whl/cpu >&2 ||
        "$venv/bin/pip" install torch torchvision >&2
    "$venv/bin/pip" install onnx onnxruntime numpy >&2
    if ! has "$venv/bin/python" 'torch, torchvision, onnx'; then
        echo "onnx-vs-torch.sh: SKIP: pip could not install torch, torchvision and onnx into $venv (no network?)" >&2
        exit 77
    fi
    py=$venv/bin/python
fi

out=${out:-$(mktemp -d "${TMPDIR:-/tmp}/onnx-vs-torch.XXXXXX")}
mkdir -p "$out" || exit 2
echo "onnx-vs-torch.sh: models, inputs and outputs in $out" >&2
"$py" "$top/tests/bench/onnx_vs_torch.py" export "$out" "$size" "$batch" || exit 2

fails=0
for model in resnet18 mobilenet_v2; do
    for be in $(echo "$backends" | tr , ' '); do
        if ! "$infer" "$out/$model.onnx" "$be" "$out/$model.in.f32" "$out/$model.$be.f32"; then
            echo "onnx-vs-torch.sh: $model on $be: dlbench failed" >&2
            fails=$((fails + 1))
            continue
        fi
        "$py" "$top/tests/bench/onnx_vs_torch.py" compare "$out" "$model" "$be" ||
            fails=$((fails + 1))
    done
done
[ "$fails" -eq 0 ]
exit $?
