#!/bin/sh
# Engine nccl of the mp plugin where it can run: two ranks under mpirun,
# a stage per GPU, LeNet on the cuda backend at a global batch of 64 in 4
# micro-batches, under GPipe and 1F1B, beside engine mpi on the same
# backend. The nccl rows are ok, carry the pipeline's figures and rank 0's
# record names a world of 2; and since both engines run the same stage
# code and only move the activations differently (device to device with
# ncclSend/ncclRecv, or through host memory with MPI), they train to the
# same weights: the same accuracy, to the last digit.
# Skipped (77) without two GPUs or without mpirun: the GPU machines lent
# to CI have one, where the configuration would only be skipped.
. "${top_srcdir:-.}/tests/integration/lib.sh"

gpus=0
command -v nvidia-smi >/dev/null 2>&1 &&
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "$gpus" -lt 2 ]; then
    echo "SKIP: engine nccl needs two GPUs; this machine has $gpus" >&2
    exit 77
fi
if ! command -v mpirun >/dev/null 2>&1; then
    echo "SKIP: engine nccl starts its ranks with mpirun, which is missing" >&2
    exit 77
fi
launcher="mpirun --oversubscribe -np {ranks}"
[ "$(id -u)" -eq 0 ] && launcher="mpirun --allow-run-as-root --oversubscribe -np {ranks}"

cat >mp-nccl.ini <<'INI'
[suite]
name = mp-nccl
mode = train
dataset = synthetic
backend = cuda
model = lenet
batch = 64
seed = 42
train_steps = 10
warmup = 0.1s
time_cap = 1s
min_samples = 5
timeout = 300s

[mp]
enable = on
ranks = 2
micro_batches = 4

[sweep]
mp.engine = nccl, mpi
mp.schedule = gpipe, 1f1b
INI
"$DLBENCH" --suite mp-nccl.ini --launcher "$launcher" --out run \
    >out.txt 2>err.txt
rc=$?
ok "the suite runs (rc $rc)" [ "$rc" -le 1 ]
[ "$rc" -le 1 ] || sed -n '1,60p' out.txt err.txt >&2
ok "results.json written" [ -s run/results.json ]

id() { echo "mp.engine=$1 mp.schedule=$2"; }
rec() { json run/results.json "[r for r in d['records'] if r['id']=='$1'][0]$2"; }
metric() { rec "$1" "['metrics']['$2']['value']"; }
for e in nccl mpi; do
    for s in gpipe 1f1b; do
        st=$(status_of run/results.json "$(id $e $s)")
        ok "$e $s: ok ($st: $(rec "$(id $e $s)" "['reason']" 2>/dev/null))" \
            [ "$st" = ok ]
    done
done
for s in gpipe 1f1b; do
    n=$(id nccl $s)
    ok "nccl $s: 2 stages" [ "$(metric "$n" mp.stages)" = 2.0 ]
    ok "nccl $s: bytes between the stages" python3 -c \
        "import sys; assert float(sys.argv[1]) > 0" "$(metric "$n" mp.sent_bytes)"
    ok "nccl $s: world of 2" [ "$(rec "$n" "['world']['size']")" = 2 ]
    ok "nccl $s: the accuracy of engine mpi" \
        [ "$(metric "$n" accuracy)" = "$(metric "$(id mpi $s)" accuracy)" ]
done
finish
