#!/bin/sh
# ONNX models in a suite, end to end on the real binary: `--set
# model=FILE.onnx` trains and measures the imported network (its weights
# from the file, said in the record), inference runs the file's weights
# (external data included) as they are, it is a sweep axis beside an INI
# model, the prune plugin applies to it, and a bad model exits 2 naming
# the node, with nothing written.
. "${top_srcdir:-.}/tests/integration/lib.sh"

export DLBENCH_CACHE_DIR="$T/cache"
data=$(cd "$top_srcdir/tests/data/onnx" && pwd)
suite="$SUITES/onnx.ini"

"$DLBENCH" run "$suite" --set model="$data/tiny_res.onnx" --out a >a.out 2>a.err
ok "a run of tiny_res.onnx exits 0" [ $? -eq 0 ]
ok "its record is ok, trained, from the file's weights" python3 -c "
import json
d = json.load(open('a/results.json'))
rs = d['records']
assert len(rs) == 1 and rs[0]['status'] == 'ok', rs
m = rs[0]['metrics']
assert m['weights_from_file']['value'] == 1, m
assert m['params']['value'] == 36 + 144 + 16 + 50, m['params']
assert 0 <= m['accuracy']['value'] <= 100, m
assert rs[0]['config']['model'].endswith('tiny_res.onnx'), rs[0]['config']"
ok "results.csv written" [ -s a/results.csv ]

# Inference runs the file's weights as they are: no reference training
# (which would log its steps and leave a checkpoint in the cache).
"$DLBENCH" run "$suite" --set mode=infer --set train_samples=0 --set model="$data/ext_data.onnx" --out i >i.out 2>i.err
ok "mode = infer of ext_data.onnx (external weights) exits 0" [ $? -eq 0 ]
ok "its record is ok, from the file's weights" python3 -c "
import json
r = json.load(open('i/results.json'))['records'][0]
assert r['status'] == 'ok' and r['metrics']['weights_from_file']['value'] == 1, r"
ok "no reference weights trained for it" [ -z "$(find "$DLBENCH_CACHE_DIR" -name '*ext_data*' 2>/dev/null)" ]

# A sweep over an ONNX model and an INI one, speed only (LeNet's accuracy
# on ref would take long): two workloads.
cat >sweep.ini <<EOF2
[suite]
name = onnx-sweep
mode = train
dataset = synthetic
backend = ref
batch = 8
seed = 1
measure_only = on
warmup = 0.01s
time_cap = 0.05s
min_samples = 3
[sweep]
model = lenet, $data/tiny_res.onnx
EOF2
"$DLBENCH" run sweep.ini --out s >s.out 2>s.err
ok "a sweep of lenet and tiny_res.onnx exits 0" [ $? -eq 0 ]
ok "both models measured, the ONNX one with its file's weights" python3 -c "
import json
rs = {r['config']['model']: r for r in json.load(open('s/results.json'))['records']}
assert len(rs) == 2 and all(r['status'] == 'ok' for r in rs.values()), rs
dw = [v for k, v in rs.items() if k.endswith('tiny_res.onnx')][0]
assert dw['metrics']['weights_from_file']['value'] == 1, dw['metrics']
assert 'weights_from_file' not in rs['lenet']['metrics'], rs['lenet']['metrics']"

# A plugin applies as on an INI model: magnitude pruning of the imported
# weights, fine-tuned for 2 steps (training through the plugin).
cat >prune.ini <<EOF2
[suite]
name = onnx-prune
mode = infer
dataset = synthetic
backend = ref
batch = 8
seed = 1
warmup = 0.01s
time_cap = 0.05s
min_samples = 3
[prune]
layers = all
[sweep]
prune.enable = off, on
prune.method = magnitude
prune.sparsity = 0.5
prune.finetune_steps = 2
EOF2
"$DLBENCH" run prune.ini --set model="$data/tiny_res.onnx" --out p >p.out 2>p.err
ok "pruning tiny_res.onnx exits 0" [ $? -eq 0 ]
ok "half of its conv and linear weights zeroed, then fine-tuned" python3 -c "
import json
rs = json.load(open('p/results.json'))['records']
assert [r['status'] for r in rs] == ['ok', 'ok'], rs
m = rs[1]['metrics']
assert m['prune.sparsity_measured']['value'] == 0.5, m
assert m['prune.params_before']['value'] == 246, m
assert 'prune.finetune_loss_last' in m and m['weights_from_file']['value'] == 1, m"

# Bad models: exit 2, the node named, nothing in --out.
for m in bad_attr:Conv_12 bad_op:Leaky_3 bad_shape:Add_7; do
    f=${m%%:*} node=${m#*:}
    "$DLBENCH" run "$suite" --set model="$data/$f.onnx" --out "b-$f" >"b-$f.out" 2>"b-$f.err"
    ok "$f exits 2" [ $? -eq 2 ]
    ok "$f: the error names node '$node'" grep -q "$f.onnx: node '$node'" "b-$f.err"
    ok "$f: nothing written" [ ! -e "b-$f" ]
done
"$DLBENCH" run "$suite" --set model="$data/truncated.onnx" --out t >t.out 2>t.err
ok "a truncated model exits 2" [ $? -eq 2 ]
ok "it says so" grep -q "truncated.onnx: not an ONNX model" t.err
ok "nothing written for it" [ ! -e t ]
finish
