#!/bin/sh
# dlbench export RUNDIR, end to end on the real binary: a LeNet run with
# filter pruning and one with int8 quantisation (both on ref, a few
# training steps on synthetic data, --quick) are exported; the re-run's
# accuracy is printed beside the recorded one and equals it; the file
# passes onnx.checker (python3-onnx), has the operators the model has
# (Conv, MaxPool, Relu, Flatten, Gemm; the pruned convolutions with half
# their filters; the int8 one a QuantizeLinear/DequantizeLinear pair
# before each of its 4 conv and linear layers, int8 weights and int32
# biases behind DequantizeLinear); read back by dlbench (mode = infer,
# --set model=FILE.onnx) it scores the re-run's accuracy (pruned: the
# same; int8, simulated in fp32: within 0.5 points, the int8 model
# requantising from its int32 sums). Bad input (no run directory, no
# results.json, a workload out of range, a bad option) exits 2 with a
# message that names it, writing nothing. Skips (77) without python3-onnx.
. "${top_srcdir:-.}/tests/integration/lib.sh"

PY=/usr/bin/python3
if ! "$PY" -c 'import onnx' 2>/dev/null; then
    echo "SKIP: python3-onnx is not installed (apt-get install python3-onnx)" >&2
    exit 77
fi
export DLBENCH_CACHE_DIR="$T/cache"

# accuracy FILE: the "accuracy X% re-run" figure an export printed
rerun_acc() { sed -n 's/.*accuracy \([0-9.]*\)% re-run.*/\1/p' "$1"; }
# infer_acc MODEL OUT: the accuracy of dlbench's inference of MODEL
infer_acc() {
    "$DLBENCH" --suite "$SUITES/export-infer.ini" --quick --set model="$1" \
        --out "$2" >"$2.out" 2>"$2.err" &&
        json "$2/results.json" "d['records'][0]['metrics']['accuracy']['value']"
}
# check FILE PYTHON: python3-onnx on FILE as `m`, the op types as `ops`
check() {
    "$PY" -c "
import sys, onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m, full_check=True)
ops = [n.op_type for n in m.graph.node]
init = {t.name: t for t in m.graph.initializer}
$2" "$1"
}

# ---- pruned: filters_l1 rebuilds conv1 with half its 10 filters --------
"$DLBENCH" --suite "$SUITES/export-prune.ini" --quick --out p >p.out 2>p.err
ok "pruned run succeeds" [ $? -eq 0 ] || cat p.err >&2
ok "pruned run wrote best.ini" [ -s p/best.ini ]
"$DLBENCH" export p >pe.out 2>pe.err
ok "export of the pruned run exits 0" [ $? -eq 0 ] || cat pe.err >&2
ok "export says what it re-ran" grep -q "running p/best.ini again" pe.out
ok "export says where the file went" grep -q "written p/best.onnx" pe.out
ok "re-run accuracy agrees with the recorded one" grep -q "recorded (they agree)" pe.out
ok "re-run accuracy is the recorded figure" "$PY" -c "
import json, sys
rec = json.load(open('p/results.json'))['records'][0]['metrics']['accuracy']['value']
assert abs(float(sys.argv[1]) - rec) < 0.005, (sys.argv[1], rec)" "$(rerun_acc pe.out)"
ok "pruned file passes onnx.checker with LeNet's operators" check p/best.onnx "
assert m.opset_import[0].version == 13 and m.ir_version == 7, m.opset_import
assert ops == ['Conv', 'MaxPool', 'Relu', 'Conv', 'MaxPool', 'Relu', 'Flatten',
               'Gemm', 'Relu', 'Gemm'], ops
assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_param == 'batch'
assert m.graph.output[0].name == 'logits'"
ok "pruned convolutions keep half their filters (conv2 reads conv1's 5)" check p/best.onnx "
w1 = init[m.graph.node[0].input[1]]
w2 = init[m.graph.node[3].input[1]]
assert list(w1.dims) == [5, 1, 5, 5], w1.dims
assert list(w2.dims) == [10, 5, 5, 5], w2.dims"
acc=$(rerun_acc pe.out)
back=$(infer_acc "$PWD/p/best.onnx" pi)
ok "pruned file read back by dlbench scores the re-run's accuracy ($back vs $acc)" \
    "$PY" -c "import sys; a, b = map(float, sys.argv[1:]); assert abs(a - b) < 0.005, (a, b)" \
    "${back:-nan}" "${acc:-nan}"

# ---- int8 on ref: QDQ ---------------------------------------------------
"$DLBENCH" --suite "$SUITES/export-quant.ini" --quick --out q >q.out 2>q.err
ok "int8 run succeeds" [ $? -eq 0 ] || cat q.err >&2
"$DLBENCH" export q --out "$PWD/lenet-int8.onnx" >qe.out 2>qe.err
ok "export of the int8 run exits 0" [ $? -eq 0 ] || cat qe.err >&2
ok "--out names the file" [ -s lenet-int8.onnx ] && ok "no default file" [ ! -e q/best.onnx ]
ok "int8 re-run accuracy agrees" grep -q "recorded (they agree)" qe.out
ok "int8 file: a QDQ pair before each conv and linear layer" check lenet-int8.onnx "
mm = [n for n in m.graph.node if n.op_type in ('Conv', 'Gemm')]
assert len(mm) == 4, ops
prod = {o: n for n in m.graph.node for o in n.output}
for n in mm:
    dq = prod[n.input[0]]
    assert dq.op_type == 'DequantizeLinear', (n.name, dq.op_type)
    assert prod[dq.input[0]].op_type == 'QuantizeLinear', n.name
    w = prod[n.input[1]]
    assert w.op_type == 'DequantizeLinear', n.name
    assert init[w.input[0]].data_type == onnx.TensorProto.INT8, n.name
    assert init[w.input[1]].dims[0] == init[w.input[0]].dims[0], 'per channel'
    b = prod[n.input[2]]
    assert init[b.input[0]].data_type == onnx.TensorProto.INT32, n.name
assert 'BatchNormalization' not in ops"
acc=$(rerun_acc qe.out)
back=$(infer_acc "$PWD/lenet-int8.onnx" qi)
ok "int8 file read back (fp32 simulation) within 0.5 points ($back vs $acc)" \
    "$PY" -c "import sys; a, b = map(float, sys.argv[1:]); assert abs(a - b) <= 0.5, (a, b)" \
    "${back:-nan}" "${acc:-nan}"

# ---- bad input: exit 2, a message naming it, nothing written -----------
bad() { # DESCRIPTION TEXT-IN-MESSAGE ARGS...
    d=$1 t=$2
    shift 2
    "$DLBENCH" export "$@" >bad.out 2>bad.err
    st=$?
    ok "$d: exit 2 (got $st)" [ "$st" -eq 2 ]
    ok "$d: says '$t'" grep -q -- "$t" bad.err
}
bad "no such run directory" "nowhere: no such run directory" nowhere
mkdir empty
bad "no results.json" "empty/results.json" empty
ok "nothing written in it" [ -z "$(ls empty)" ]
bad "workload out of range" "has 1 workload (1 to 1)" p --workload 2
bad "workload not a number" "--workload x" p --workload x
bad "unknown option" "unknown option" p --bogus
bad "no run directory given" "which run directory" 
rm -f p/best.ini
bad "no best.ini" "p/best.ini" p
ok "no file written for it" [ -s p/best.onnx ] # the earlier export's stays
finish
