#!/bin/sh
# suites/prune.ini in its --quick form (LeNet): every configuration runs;
# the dense baseline comes first and each pruned row carries its speedup
# and accuracy drop against it. Magnitude rows: the zeros counted on the
# model equal the zeros the masks set (also after fine-tuning: the masks
# are kept), the measured sparsity equals the nominal one to within one
# weight, the dense size is unchanged while the CSR size at 90% is smaller,
# and which linear layers ran sparse is recorded. Filter rows: the network
# is smaller (parameters, FLOPs), the units removed are the nominal
# fraction. Fine-tuned rows have the accuracy after fine-tuning, which is
# the configuration's accuracy. Bad settings are refused at suite load
# with the file and line and exit status 2; plugin-help lists every key.
# With measure_only = on the models are pruned as before, but neither
# fine-tuned nor evaluated.
. "${top_srcdir:-.}/tests/integration/lib.sh"

"$DLBENCH" --suite "$top_srcdir/suites/prune.ini" --quick --out run >out.txt 2>err.txt
rc=$?
ok "quick prune run succeeds (rc $rc)" [ "$rc" -eq 0 ]
ok "results.json written" [ -s run/results.json ]

p='batch=64 prune.enable=on prune.method'
dense='batch=64 prune.enable=off prune.method=magnitude prune.sparsity=0.5 prune.finetune_steps=0'
mag9="$p=magnitude prune.sparsity=0.9 prune.finetune_steps=0"
mag9ft="$p=magnitude prune.sparsity=0.9 prune.finetune_steps=20"
mag5="$p=magnitude prune.sparsity=0.5 prune.finetune_steps=0"
fil5="$p=filters_l1 prune.sparsity=0.5 prune.finetune_steps=0"
fil5ft="$p=filters_l1 prune.sparsity=0.5 prune.finetune_steps=20"

rec() { json run/results.json "[r for r in d['records'] if r['id']=='$1'][0]$2"; }
m() { rec "$1" "['metrics']['$2']['value']"; }
# check EXPR ARGS...: a python expression over a = argv[1], b = argv[2] ...
check() { e=$1; shift; python3 -c "import sys; a,b,c=(list(map(float,sys.argv[1:]))+[0,0,0])[:3]; assert $e, sys.argv[1:]" "$@"; }

ok "9 configurations" [ "$(json run/results.json "len(d['records'])")" = 9 ]
ok "all ok" [ "$(json run/results.json "sorted(set(r['status'] for r in d['records']))")" = "['ok']" ]
ok "dense first" [ "$(json run/results.json "d['records'][0]['id']")" = "$dense" ]
for id in "$mag9" "$fil5" "$fil5ft"; do
    ok "speedup vs dense: $id" check "a > 0" "$(rec "$id" "['vs_baseline']['speedup']")"
    ok "baseline named: $id" [ "$(rec "$id" "['vs_baseline']['baseline_id']")" = "$dense" ]
done

# Magnitude: counted zeros are what the masks set; sparsity as asked.
for id in "$mag5" "$mag9" "$mag9ft"; do
    ok "zeros counted = zeros set: $id" check "a == b and a > 0" \
        "$(m "$id" prune.zeros_counted)" "$(m "$id" prune.zeros_set)"
    ok "measured sparsity = nominal: $id" check "abs(a - b) <= 1.0 / c" \
        "$(m "$id" prune.sparsity_measured)" "$(m "$id" prune.sparsity_nominal)" \
        "$(m "$id" prune.weights_targeted)"
    ok "dense size unchanged: $id" check "a == b" \
        "$(m "$id" prune.size_after_bytes)" "$(m "$id" prune.size_before_bytes)"
    ok "sparse choice recorded: $id" check "a in (0, 1)" "$(m "$id" prune.sparse.fc1)"
    ok "CSR and dense timed: $id" check "a > 0 and b > 0" \
        "$(m "$id" prune.sparse_dense_us.fc1)" "$(m "$id" prune.sparse_csr_us.fc1)"
done
ok "CSR size smaller at 90%" check "a < b" \
    "$(m "$mag9" prune.size_csr_bytes)" "$(m "$mag9" prune.size_before_bytes)"
ok "nonzeros = params - zeros" check "a == b - c" \
    "$(m "$mag9" prune.nonzero_params_after)" "$(m "$mag9" prune.params_after)" \
    "$(m "$mag9" prune.zeros_counted)"

# Filters: a smaller network.
for id in "$fil5" "$fil5ft"; do
    ok "fewer parameters: $id" check "a < b / 2" \
        "$(m "$id" prune.params_after)" "$(m "$id" prune.params_before)"
    ok "fewer FLOPs: $id" check "a < b / 2" \
        "$(m "$id" prune.flops_after)" "$(m "$id" prune.flops_before)"
    ok "half the units removed: $id" check "a == 0.5" "$(m "$id" prune.sparsity_measured)"
done

# Accuracy at each stage; the configuration's accuracy is the last.
ok "accuracy before pruning = dense row's" check "a == b" \
    "$(m "$mag9" prune.accuracy_dense)" "$(m "$dense" accuracy)"
ok "pruned accuracy is the row's" check "abs(a - b) <= 0.1" \
    "$(m "$fil5" prune.accuracy_pruned)" "$(m "$fil5" accuracy)"
ok "fine-tuned accuracy is the row's" check "abs(a - b) <= 0.1" \
    "$(m "$fil5ft" prune.accuracy_finetuned)" "$(m "$fil5ft" accuracy)"
ok "fine-tuning timed" check "a > 0" "$(m "$fil5ft" prune.finetune_s)"
ok "vs baseline table printed" grep -q "^vs baseline" out.txt

# Bad settings: refused at load with file and line, exit status 2.
bad() { # NAME EXPECTED-LINE TEXT-IN-MESSAGE, suite on stdin
    cat > "$1.ini"
    "$DLBENCH" --suite "$1.ini" --out "out-$1" >/dev/null 2>"$1.txt"
    st=$?
    ok "$1 refused with status 2 (got $st)" [ "$st" -eq 2 ]
    ok "$1: names $1.ini:$2" grep -q "$1.ini:$2" "$1.txt"
    ok "$1: says '$3'" grep -q "$3" "$1.txt"
    ok "$1: no run directory" [ ! -d "out-$1" ]
}
bad sparsity-one 5 "< 1" <<'INI'
[suite]
mode = infer
model = lenet
[prune]
sparsity = 1
INI
bad sparsity-negative 5 ">= 0" <<'INI'
[suite]
mode = infer
model = lenet
[prune]
sparsity = -0.1
INI
bad sparsity-axis 5 "< 1" <<'INI'
[suite]
mode = infer
model = lenet
[sweep]
prune.sparsity = 0.5, 1.5
INI
bad method 5 "magnitude" <<'INI'
[suite]
mode = infer
model = lenet
[prune]
method = magnitud
INI
bad untrained 3 "no trained weights" <<'INI'
[suite]
mode = train
train_steps = 0
model = lenet
[prune]
sparsity = 0.5
INI

# measure_only (halving's screening rounds): the same pruned model, so
# the same speed figures' kind, but no fine-tuning and no accuracy.
"$DLBENCH" --suite "$top_srcdir/suites/prune.ini" --quick --set measure_only=on \
    --out mo >mo.out 2>mo.err
ok "measure_only run succeeds" [ $? -eq 0 ]
ok "measure_only: every row measured" [ "$(json mo/results.json \
    "sorted(set(r['status'] for r in d['records']))")" = "['ok']" ]
ok "measure_only: no accuracy, no fine-tuning" python3 -c "
import json,sys
d=json.load(open('mo/results.json'))
bad=[r['id'] for r in d['records'] for k in ('accuracy','prune.accuracy_dense',
     'prune.finetune_s','prune.accuracy_finetuned') if k in r.get('metrics',{})]
sys.exit(1 if bad else 0)"
ok "measure_only: still pruned" check "a == b and a > 0" \
    "$(json mo/results.json "[r for r in d['records'] if r['id']=='$mag9'][0]['metrics']['prune.zeros_counted']['value']")" \
    "$(m "$mag9" prune.zeros_counted)"
ok "measure_only: the skip is logged" grep -q "fine-tuning steps and the accuracy evaluations skipped" mo/logs/*.log

# An inference screening (screen_accuracy) scores the accuracy, but not of
# a model whose fine-tuning was skipped: that accuracy is not the
# configuration's, and the search would drop it for a drop it does not have.
"$DLBENCH" --suite "$top_srcdir/suites/prune.ini" --quick --set measure_only=on \
    --set screen_accuracy=on --out sa >sa.out 2>sa.err
ok "screen_accuracy run succeeds" [ $? -eq 0 ]
ok "screen_accuracy: an accuracy exactly where nothing that changes it was skipped" \
    python3 -c "
import json,sys
d=json.load(open('sa/results.json'))
rows=[(r['config']['prune.finetune_steps'], 'accuracy' in r['metrics']) for r in d['records']]
sys.exit(0 if any(ft == 0 for ft, _ in rows) and any(ft > 0 for ft, _ in rows) and
         all(has == (ft == 0) for ft, has in rows) else 1)"
ok "screen_accuracy: the reason is logged" grep -q "no accuracy scored; a plugin skipped work" sa/logs/*.log

# A network that branches (ResNet-20's residual adds): filter pruning
# removes the same units from every conv whose output meets at an add (one
# group per stage, the projection shortcut in it), the consumers losing
# the matching inputs; the classifier is kept whole with the reason in the
# log. Magnitude pruning masks it.
"$DLBENCH" --suite "$top_srcdir/suites/prune.ini" --quick --set measure_only=on \
    --set model=resnet20 --set prune.sparsity=0.5 --set prune.finetune_steps=0 \
    --out rn >rn.out 2>rn.err
rn_filters="batch=64 prune.enable=on prune.method=filters_l1 prune.sparsity=0.5 prune.finetune_steps=0"
rn_mag="batch=64 prune.enable=on prune.method=magnitude prune.sparsity=0.5 prune.finetune_steps=0"
mr() { json rn/results.json "[r for r in d['records'] if r['id']=='$1'][0]['metrics']['$2']['value']"; }
ok "resnet20: filter pruning runs" [ "$(json rn/results.json \
    "[r for r in d['records'] if r['id']=='$rn_filters'][0]['status']")" = ok ]
ok "resnet20: every conv pruned, half the units" check "a == 0.5" \
    "$(mr "$rn_filters" prune.sparsity_measured)"
ok "resnet20: about a quarter of the parameters left" check "a < b * 0.3" \
    "$(mr "$rn_filters" prune.params_after)" "$(mr "$rn_filters" prune.params_before)"
ok "resnet20: one layer (fc) kept whole" check "a == 1" \
    "$(mr "$rn_filters" prune.layers_kept_whole)"
ok "resnet20: fc kept whole, the reason logged" grep -q \
    "filters: 'fc' kept whole: it gives the class scores" rn/logs/*.log
ok "resnet20: the stage-1 group pruned as one" grep -q \
    "filters: 'conv1' and 3 more layers whose outputs meet at adds keep the same 8 of 16 units" \
    rn/logs/*.log
ok "resnet20: magnitude pruning runs" [ "$(json rn/results.json \
    "[r for r in d['records'] if r['id']=='$rn_mag'][0]['status']")" = ok ]

"$DLBENCH" plugin-help prune >help.txt 2>&1
for k in method sparsity layers finetune_steps finetune_batch finetune_lr sparse; do
    ok "plugin-help lists $k" grep -q "$k" help.txt
done
finish
