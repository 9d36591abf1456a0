#!/bin/sh
# suites/mp.ini in its --quick form: LeNet at a global batch of 64 on one
# worker, two dp replica threads, and two pipeline stages with 4
# micro-batches on threads and on two MPI ranks (mpirun -np 2), under
# GPipe and 1F1B. Every row ok; the pipeline rows carry their figures
# (bubble share within [0, 100], activation memory per stage, bytes sent
# between stages, the cut); 1F1B keeps less for backward than GPipe; both
# schedules and both engines train to the same weights, hence the same
# accuracy; rank 0's record names the world. Then bad settings are refused
# when the suite is loaded, with the file and line and exit status 2: a
# cut point that names no layer, more stages than layers, micro-batches
# below one or above the batch, an unknown schedule, a cut inside a
# residual block. ResNet-20 runs on two stages cut between blocks under
# both schedules. plugin-help lists
# the check hook, and engine nccl on a CPU backend is skipped with why.
# The MPI rows need mpirun; without it they are skipped with the reason
# and only the rest is checked.
. "${top_srcdir:-.}/tests/integration/lib.sh"

LSAN_OPTIONS="suppressions=$top_srcdir/tests/integration/lsan-openmpi.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS ASAN_OPTIONS
launcher="mpirun --oversubscribe -np {ranks}"
[ "$(id -u)" -eq 0 ] && launcher="mpirun --allow-run-as-root --oversubscribe -np {ranks}"
have_mpi=0
command -v mpirun >/dev/null 2>&1 && have_mpi=1

"$DLBENCH" --suite "$top_srcdir/suites/mp.ini" --quick --launcher "$launcher" \
    --out run >out.txt 2>err.txt
rc=$?
ok "quick mp suite runs (rc $rc)" [ "$rc" -le 1 ]
[ "$rc" -le 1 ] || sed -n '1,60p' out.txt err.txt >&2
ok "results.json written" [ -s run/results.json ]
ok "results.csv written" [ -s run/results.csv ]
ok "six configurations" [ "$(json run/results.json "len(d['records'])")" = 6 ]

rec() { json run/results.json "[r for r in d['records'] if r['id']=='$1'][0]$2"; }
metric() { rec "$1" "['metrics']['$2']['value']"; }
cfg() { # dp.enable mp.enable engine ranks schedule
    echo "model=lenet dp.enable=$1 mp.enable=$2 mp.engine=$3 mp.stages=2 mp.ranks=$4 mp.micro_batches=4 mp.schedule=$5"
}
one=$(cfg off off threads 1 gpipe)
dp=$(cfg on off threads 1 gpipe)
tg=$(cfg off on threads 1 gpipe)
to=$(cfg off on threads 1 1f1b)
mg=$(cfg off on mpi 2 gpipe)
mo=$(cfg off on mpi 2 1f1b)
for id in "$one" "$dp" "$tg" "$to"; do
    ok "$id ok" [ "$(status_of run/results.json "$id")" = ok ]
done
if [ $have_mpi = 1 ]; then
    for id in "$mg" "$mo"; do
        ok "$id ok" [ "$(status_of run/results.json "$id")" = ok ]
    done
fi
ok "no row without throughput" python3 -c "
import json, sys
d = json.load(open('run/results.json'))
bad = [r['id'] for r in d['records'] if r['status'] == 'ok' and not r['throughput']['median'] > 0]
sys.exit(1 if bad else 0)"
check_pipe() {
    id=$1
    ok "2 stages: $id" [ "$(metric "$id" mp.stages)" = 2.0 ]
    ok "4 micro-batches of 16: $id" [ "$(metric "$id" mp.micro_batch)" = 16.0 ]
    ok "bubble share in [0, 100]: $id" python3 -c \
        "import sys; assert 0 <= float(sys.argv[1]) <= 100" "$(metric "$id" mp.bubble_share)"
    ok "ideal bubble 20%: $id" python3 -c \
        "import sys; assert abs(float(sys.argv[1]) - 20) < 1e-9" "$(metric "$id" mp.bubble_ideal)"
    for s in 0 1; do
        ok "activation memory of stage $s: $id" python3 -c \
            "import sys; assert float(sys.argv[1]) > 0" "$(metric "$id" mp.act_peak_s$s)"
    done
    ok "bytes between stages: $id" python3 -c \
        "import sys; assert float(sys.argv[1]) > 0" "$(metric "$id" mp.sent_bytes)"
    ok "the cut: $id" python3 -c \
        "import sys; assert 0 < float(sys.argv[1]) < 13" "$(metric "$id" mp.first_layer_s1)"
}
check_pipe "$tg"
check_pipe "$to"
if [ $have_mpi = 1 ]; then
    check_pipe "$mg"
    check_pipe "$mo"
fi
# Shares of peak count the cores the workers kept busy: two stages or two
# replicas of one thread each against two cores' roofline (one where the
# machine has one CPU), one worker against one core's.
if [ -n "$(json run/results.json "d['records'][0]['metrics'].get('peak_threads', {}).get('value', '')")" ]; then
    cores=$(getconf _NPROCESSORS_ONLN)
    [ "$cores" -gt 2 ] && cores=2
    ok "one worker: one core's roofline" [ "$(metric "$one" peak_threads)" = 1.0 ]
    for id in "$dp" "$tg" "$to"; do
        ok "two workers: $cores cores' roofline: $id" [ "$(metric "$id" peak_threads)" = "$cores.0" ]
    done
fi
ok "1f1b keeps less for backward on stage 0 than gpipe" python3 -c \
    "import sys; assert float(sys.argv[1]) < float(sys.argv[2])" \
    "$(metric "$to" mp.act_peak_s0)" "$(metric "$tg" mp.act_peak_s0)"
acc_tg=$(metric "$tg" accuracy)
ok "accuracy recorded" python3 -c "import sys; assert float(sys.argv[1]) > 0" "$acc_tg"
ok "gpipe and 1f1b: the same training, the same accuracy" \
    [ "$acc_tg" = "$(metric "$to" accuracy)" ]
ok "LeNet has no batch norm: the pipeline trains as one worker does" \
    [ "$acc_tg" = "$(metric "$one" accuracy)" ]
if [ $have_mpi = 1 ]; then
    ok "mpi and threads: the same accuracy" \
        [ "$(metric "$mg" accuracy)" = "$(metric "$tg" accuracy)" ]
    ok "mpi record: world size 2" [ "$(rec "$mg" "['world']['size']")" = 2 ]
fi
ok "the report names the winner" grep -q -i "best\|fastest" run/report.md

# Bad settings: refused at load, naming the file and line, exit 2.
bad() { # name, expected text, suite body
    printf '%s\n' "$3" >"$1.ini"
    "$DLBENCH" --suite "$1.ini" --out "$1.out" >"$1.txt" 2>&1
    rc=$?
    ok "$1: exit 2 (rc $rc)" [ "$rc" -eq 2 ]
    ok "$1: names the file and line" grep -q "$1.ini:$4" "$1.txt"
    ok "$1: says why" grep -q "$2" "$1.txt"
    [ "$rc" -eq 2 ] || cat "$1.txt" >&2
}
base='[suite]
model = lenet
batch = 64
[mp]'
bad cut-no-layer "names no layer" "$base
cuts = fc9" 5
bad too-many-stages "stages for a network of 13 layers" "$base
stages = 20" 5
bad micro-zero "micro_batches" "$base
micro_batches = 0" 5
bad micro-over-batch "for a batch of 64" "$base
micro_batches = 65" 5
bad unknown-schedule "schedule" "$base
schedule = interleaved" 5
bad cuts-count "makes 3 stages" "$base
cuts = conv2, fc1" 5
# Inside a residual block the shortcut would cross as a second tensor.
bad cut-in-block "'layer1_0_conv2' would hand two tensors on: layer 'layer1_0_add' reads" '[suite]
model = resnet20
batch = 64
[mp]
cuts = layer1_0_conv2' 5

# ResNet-20 on two stages: the planner cuts between residual blocks (no
# layer from the cut on reads an output from before the layer just ahead
# of it, read here from the model file itself), and the pipeline trains
# as one worker accumulating over the micro-batches does.
printf '%s\n' '[suite]' 'model = resnet20' 'dataset = synthetic' 'backend = cpu' \
    'batch = 16' 'train_steps = 2' 'warmup = 0.01s' 'time_cap = 0.2s' \
    'min_samples = 3' '[mp]' 'stages = 2' 'micro_batches = 2' \
    '[sweep]' 'mp.schedule = gpipe, 1f1b' >resnet.ini
"$DLBENCH" --suite resnet.ini --out resnet >resnet.txt 2>&1
rc=$?
ok "ResNet-20 on two stages runs (rc $rc)" [ "$rc" -le 1 ]
[ "$rc" -le 1 ] || cat resnet.txt >&2
for sc in gpipe 1f1b; do
    id="mp.schedule=$sc"
    ok "ResNet-20 $sc ok" [ "$(status_of resnet/results.json "$id")" = ok ]
    cut=$(json resnet/results.json "[r for r in d['records'] if r['id']=='$id'][0]['metrics']['mp.first_layer_s1']['value']")
    ok "ResNet-20 $sc: the cut ($cut) is between blocks" python3 - \
        "$top_srcdir/suites/models/resnet20.ini" "$cut" <<'PY'
import configparser, sys
c = configparser.ConfigParser(inline_comment_prefixes=(';', '#'))
c.read(sys.argv[1])
names = [n for n in c.sections() if n != 'net']
k = int(float(sys.argv[2]))
reads = {}
for i, n in enumerate(names):
    ins = c[n].get('input', names[i - 1] if i else 'net')
    reads[i] = [-1 if x.strip() == 'net' else names.index(x.strip())
                for x in ins.split(',')]
assert 0 < k < len(names), k
assert all(j >= k - 1 for i in range(k, len(names)) for j in reads[i]), names[k]
PY
done
ok "ResNet-20: gpipe and 1f1b train to the same accuracy" [ \
    "$(json resnet/results.json "[r for r in d['records'] if r['id']=='mp.schedule=gpipe'][0]['metrics']['accuracy']['value']")" = \
    "$(json resnet/results.json "[r for r in d['records'] if r['id']=='mp.schedule=1f1b'][0]['metrics']['accuracy']['value']")" ]

# plugin-help names the hooks, the load-time check among them.
"$DLBENCH" plugin-help mp >help.txt 2>&1
ok "plugin-help mp lists the check hook" grep -q '^Hooks:.* executor.* check' help.txt

# Engine nccl on a CPU backend: skipped with the reason, never run on
# another engine in its place (a build without CUDA or MPI says it is not
# built).
printf '%s\n' '[suite]' 'model = lenet' 'dataset = synthetic' 'backend = cpu' \
    'batch = 16' 'train_steps = 0' 'warmup = 0.01s' 'time_cap = 0.1s' \
    '[mp]' 'engine = nccl' >nccl-cpu.ini
"$DLBENCH" --suite nccl-cpu.ini --out nccl-cpu >nccl-cpu.txt 2>&1
ok "engine nccl on cpu: the run succeeds" [ -s nccl-cpu/results.json ]
r=$(json nccl-cpu/results.json "d['records'][0]['status'] + ': ' + d['records'][0]['reason']")
ok "engine nccl on cpu: skipped with the reason ($r)" \
    sh -c "echo '$r' | grep -Eq '^skipped: mp: engine nccl (runs a stage per GPU: it needs backend = cuda|is not built)'"
finish
