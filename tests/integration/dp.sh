#!/bin/sh
# suites/dp.ini in its --quick form, run as two shards (--shard 1/2, 2/2)
# joined by `dlbench merge`: one worker, two replica threads and two MPI
# ranks started through `mpirun -np 2` (with --oversubscribe, and
# --allow-run-as-root as root); every row ok, rank 0's record names the world
# (size and the host of every rank), the weights are bit-identical on every
# worker, the figures are there, and the two engines, which sum the same
# gradients in the same order, reach the same accuracy. Then:
#   - a rank killed half-way fails the configuration with a reason naming
#     the rank before the timeout; a rank that hangs is ended by the
#     timeout, launcher and ranks alike;
#   - dlbench started under mpirun itself refuses, saying what to do;
#   - engine nccl without the cuda backend is skipped with the reason, and
#     so it is where dp_nccl.so cannot be loaded; dp.so links no CUDA;
#   - amp bf16 (no scaler) under dp trains alike on threads and mpi; a loss
#     scaler with dp is skipped, naming both plugins;
#   - DLBENCH_LAUNCHER starts the ranks when --launcher is not given;
#   - merge refuses shards of another suite, of another version of the
#     suite, or run with other --set options (exit 2).
# Skipped (77) without mpirun or when the dp plugin has no mpi engine.
. "${top_srcdir:-.}/tests/integration/lib.sh"

# dp.so links no CUDA library (engine nccl is dp_nccl.so, loaded only for
# it), so dp loads where the CUDA runtime or NCCL is missing.
DP_SO="$DLB_PLUGIN_DIR/dp.so"
if command -v objdump >/dev/null 2>&1 && [ -f "$DP_SO" ]; then
    ok "dp.so needs no CUDA library ($(objdump -p "$DP_SO" | grep NEEDED | tr -s ' ' | tr '\n' ';'))" \
        sh -c "! objdump -p '$DP_SO' | grep NEEDED | grep -Eq 'cuda|nccl|cublas|cudnn'"
fi

command -v mpirun >/dev/null 2>&1 || { echo "no mpirun: skipped"; exit 77; }
# A sanitizer build (--enable-sanitizers) reports what Open MPI keeps until
# exit; that is not ours to fail on.
LSAN_OPTIONS="suppressions=$top_srcdir/tests/integration/lsan-openmpi.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS ASAN_OPTIONS
printf '[suite]\nmodel = lenet\nwarmup = 0.01s\ntime_cap = 0.05s\nmin_samples = 2\n[dp]\nengine = mpi\nreplicas = 1\n' >probe.ini
"$DLBENCH" --suite probe.ini --out probe >/dev/null 2>&1
if grep -q "not built" probe/results.json 2>/dev/null; then
    echo "dp has no mpi engine in this build: skipped"; exit 77
fi
SUITE="$top_srcdir/suites/dp.ini"
launcher="mpirun --oversubscribe -np {ranks}"
[ "$(id -u)" -eq 0 ] && launcher="mpirun --allow-run-as-root --oversubscribe -np {ranks}"

# The quick suite in two shards, merged: the merged run is checked below.
"$DLBENCH" --suite "$SUITE" --quick --shard 1/2 --out s1 >s1.txt 2>&1
rc1=$?
"$DLBENCH" --suite "$SUITE" --quick --shard 2/2 --out s2 >s2.txt 2>&1
rc2=$?
ok "quick dp shards succeed (rc $rc1 $rc2)" [ "$rc1" -le 1 ] && [ "$rc2" -le 1 ]
ok "shard 1/2 ran 3 of 5" [ "$(json s1/results.json "len(d['records'])")" = 3 ]
ok "shard 2/2 ran 2 of 5" [ "$(json s2/results.json "len(d['records'])")" = 2 ]
ok "shard recorded" [ "$(json s1/results.json "d['context']['shard']['n']")" = 2 ]
"$DLBENCH" merge s1 s2 --out run >out.txt 2>err.txt
rc=$?
ok "merge joins the shards (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || sed -n '1,40p' s1.txt s2.txt err.txt >&2
ok "... every configuration" [ "$(json run/results.json "len(d['records'])")" = 5 ]
ok "... names its shards" [ "$(json run/results.json "len(d['context']['merged_from'])")" = 2 ]

base='model=lenet dp.engine=threads dp.replicas=1 dp.ranks=1 dp.bucket_size=16KiB dp.overlap=on'
thr='model=lenet dp.engine=threads dp.replicas=2 dp.ranks=1 dp.bucket_size=16KiB dp.overlap=on'
thr_off='model=lenet dp.engine=threads dp.replicas=2 dp.ranks=1 dp.bucket_size=16KiB dp.overlap=off'
mpi='model=lenet dp.engine=mpi dp.replicas=1 dp.ranks=2 dp.bucket_size=16KiB dp.overlap=on'
mpi_off='model=lenet dp.engine=mpi dp.replicas=1 dp.ranks=2 dp.bucket_size=16KiB dp.overlap=off'
rec() { json run/results.json "[r for r in d['records'] if r['id']=='$1'][0]$2"; }
metric() { rec "$1" "['metrics']['$2']['value']"; }
for id in "$base" "$thr" "$thr_off" "$mpi" "$mpi_off"; do
    ok "$id ok" [ "$(status_of run/results.json "$id")" = ok ]
done
ok "mpi record: world size 2" [ "$(rec "$mpi" "['world']['size']")" = 2 ]
ok "mpi record: a host per rank" [ "$(rec "$mpi" "['world']['hosts'].__len__()")" = 2 ]
ok "mpi record: rank 0's host is this one" \
    [ "$(rec "$mpi" "['world']['hosts'][0]")" = "$(hostname)" ]
ok "threads record: no world" [ "$(rec "$thr" ".get('world')")" = None ]
for id in "$thr" "$thr_off" "$mpi" "$mpi_off"; do
    ok "weights bit-identical: $id" [ "$(metric "$id" dp.weights_identical)" = 1.0 ]
    ok "2 workers: $id" [ "$(metric "$id" dp.workers)" = 2.0 ]
    ok "global batch 64: $id" [ "$(metric "$id" dp.global_batch)" = 64.0 ]
    ok "local batch 32: $id" [ "$(metric "$id" dp.local_batch)" = 32.0 ]
    ok "lr stated: $id" [ "$(metric "$id" dp.lr)" = 0.01 ]
    for m in dp.allreduce_s dp.busbw dp.hidden_share dp.exposed_s dp.grad_bytes; do
        ok "$m: $id" python3 -c "import sys; assert float(sys.argv[1]) >= 0" \
            "$(metric "$id" $m)"
    done
    # The figure from the two records, not its size: the throughputs
    # behind it are the machine's and its load's (tests/bench/dp-scaling.sh
    # measures it on a quiet machine).
    ok "scaling efficiency: throughput / (workers / baseline workers x the baseline's): $id" \
        python3 - "$id" <<'PY'
import json, sys
recs = {r['id']: r for r in json.load(open('run/results.json'))['records']}
r = recs[sys.argv[1]]
v = r['vs_baseline']
b = recs[v['baseline_id']]
workers = lambda x: [m['value'] for m in x['metrics'].values() if m['unit'] == 'workers'][0]
want = r['throughput']['median'] / b['throughput']['median'] * workers(b) / workers(r)
assert v['workers'] == workers(r) == 2 and workers(b) == 1, (v, workers(b))
assert v['scaling_efficiency'] > 0 and abs(v['scaling_efficiency'] / want - 1) < 1e-9, (v, want)
PY
done
ok "mpi all-reduce timed on its own" python3 -c "import sys; assert float(sys.argv[1]) > 0" \
    "$(metric "$mpi" dp.allreduce_in_step_s)"
acc() { metric "$1" accuracy; }
ok "threads and mpi sum alike: same accuracy" [ "$(acc "$thr")" = "$(acc "$mpi")" ]
ok "overlap changes no result (threads)" [ "$(acc "$thr")" = "$(acc "$thr_off")" ]
ok "overlap changes no result (mpi)" [ "$(acc "$mpi")" = "$(acc "$mpi_off")" ]
ok "scaling table printed" grep -q "^scaling" out.txt
ok "mpi row in it" grep -q "^$mpi " out.txt

# A rank killed half-way: the configuration fails naming the rank, soon.
# Here and below, a warm-up of at least 3 s keeps the signal, one second
# in, inside the run: a quick measurement had ended before it (make
# distcheck, and a rerun of this test alone).
cat > die.sh <<'EOF'
#!/bin/sh
# Rank 1 is killed one second in; every rank then runs dlbench.
if [ "${OMPI_COMM_WORLD_RANK:-}" = 1 ]; then (sleep 1; kill -9 $$) & fi
exec "$@"
EOF
start=$(date +%s)
"$DLBENCH" --suite "$SUITE" --quick --set dp.engine=mpi --set dp.overlap=on \
    --set timeout=90s --set time_cap=20s --set warmup=3s \
    --launcher "$launcher sh $T/die.sh" --out dead >dead.txt 2>&1
rc=$?
took=$(( $(date +%s) - start ))
ok "a dead rank fails the run (rc $rc)" [ "$rc" -eq 1 ]
did="model=lenet dp.engine=mpi dp.replicas=1 dp.ranks=2 dp.bucket_size=16KiB dp.overlap=on"
# Crashed, not timed out: the parent saw the rank die before the 90 s
# timeout, however long a loaded machine made the run (${took} s here).
ok "... crashed, before the timeout (${took}s)" [ "$(status_of dead/results.json "$did")" = crashed ]
ok "... the reason names rank 1" python3 -c \
    "import sys; assert 'rank 1' in sys.argv[1] and 'signal 9' in sys.argv[1], sys.argv[1]" \
    "$(json dead/results.json "[r for r in d['records'] if r['id']=='$did'][0]['reason']")"

# A rank that hangs: the timeout ends launcher and ranks.
cat > hang.sh <<'EOF'
#!/bin/sh
# Rank 1 stops one second in; rank 0 then waits for it in a collective.
if [ "${OMPI_COMM_WORLD_RANK:-}" = 1 ]; then (sleep 1; kill -STOP $$) & fi
exec "$@"
EOF
"$DLBENCH" --suite "$SUITE" --quick --set dp.engine=mpi --set dp.overlap=on \
    --set timeout=6s --set time_cap=20s --set warmup=3s \
    --launcher "$launcher sh $T/hang.sh" --out hung >hung.txt 2>&1
ok "a hanging rank times out" [ "$(status_of hung/results.json "$did")" = timeout ]
sleep 1
ok "... and leaves no rank behind" sh -c "! pgrep -f '__chil[d] --suite $T/hung/'"
pkill -KILL -f "__chil[d] --suite $T/hung/" 2>/dev/null

# dlbench itself under a launcher: refused, saying what to do.
OMPI_COMM_WORLD_SIZE=2 "$DLBENCH" --suite "$SUITE" --quick --out under >/dev/null 2>under.txt
ok "dlbench under mpirun refuses (exit 2)" [ $? -eq 2 ]
ok "... and says to set the launcher" grep -q "without mpirun" under.txt
"$DLBENCH" --suite "$SUITE" --quick --launcher "srun -n 2" --out nolabel >/dev/null 2>nolabel.txt
ok "a launcher without {ranks} is refused (exit 2)" [ $? -eq 2 ]
ok "... saying so" grep -q "{ranks}" nolabel.txt

# nccl without the cuda backend: skipped with the reason.
"$DLBENCH" --suite "$SUITE" --quick --set dp.engine=nccl --out nccl >/dev/null 2>&1
nid="model=lenet dp.engine=nccl dp.replicas=1 dp.ranks=2 dp.bucket_size=16KiB dp.overlap=on"
ok "nccl on cpu skipped" [ "$(status_of nccl/results.json "$nid")" = skipped ]
# The reason says what is missing: with dp_nccl.so built, the cuda
# backend; in a build without the CUDA toolkit (a fresh Debian 12), that
# the engine is not built and needs the toolkit.
nreason=$(json nccl/results.json "[r for r in d['records'] if r['id']=='$nid'][0]['reason']")
if [ -f "$top_builddir/plugins/dp/.libs/dp_nccl.so" ]; then
    ok "... needing backend cuda" python3 -c \
        "import sys; assert 'backend = cuda' in sys.argv[1], sys.argv[1]" "$nreason"
else
    ok "... not built, needing the CUDA toolkit" python3 -c \
        "import sys; assert 'not built' in sys.argv[1] and 'CUDA toolkit' in sys.argv[1], sys.argv[1]" "$nreason"
fi

# Where dp_nccl.so cannot be loaded (no file; not a loadable object, as
# when the CUDA libraries it needs are missing) engine nccl is skipped
# with the loader's reason, on a dp.so copied into a directory of its own.
if [ -f "$top_builddir/plugins/dp/.libs/dp_nccl.so" ]; then
    mkdir -p own/dp && chmod 700 own && cp "$DP_SO" own/
    printf '[suite]\nmodel = lenet\nbackend = cuda\nwarmup = 0.01s\ntime_cap = 0.05s\nmin_samples = 2\n[dp]\nengine = nccl\nranks = 1\n' >nc.ini
    DLBENCH_PLUGIN_PATH="$T/own" "$DLBENCH" --suite nc.ini --out nc-none >/dev/null 2>&1
    ok "no dp_nccl.so: skipped" [ "$(status_of nc-none/results.json default)" = skipped ]
    ok "... saying where it looked" python3 -c \
        "import sys; assert 'no dp_nccl.so in' in sys.argv[1], sys.argv[1]" \
        "$(json nc-none/results.json "d['records'][0]['reason']")"
    printf 'not an ELF object\n' >own/dp/dp_nccl.so
    DLBENCH_PLUGIN_PATH="$T/own" "$DLBENCH" --suite nc.ini --out nc-junk >/dev/null 2>&1
    ok "unloadable dp_nccl.so: skipped" [ "$(status_of nc-junk/results.json default)" = skipped ]
    ok "... with dlopen's reason" python3 -c \
        "import sys; assert 'cannot load' in sys.argv[1] and 'ldd' in sys.argv[1], sys.argv[1]" \
        "$(json nc-junk/results.json "d['records'][0]['reason']")"
    chmod o+w own/dp/dp_nccl.so
    DLBENCH_PLUGIN_PATH="$T/own" "$DLBENCH" --suite nc.ini --out nc-ww >/dev/null 2>&1
    ok "a world-writable dp_nccl.so is refused" python3 -c \
        "import sys; assert 'world-writable' in sys.argv[1], sys.argv[1]" \
        "$(json nc-ww/results.json "d['records'][0]['reason']")"
fi

# Mixed precision under dp: bf16 without a scaler runs on every worker in
# bf16 (the threads engine's replicas take the model's precision), so
# threads and mpi still sum the same gradients; a loss scaler, which the
# step executor does not run, skips the configuration naming both plugins.
printf '%s\n' '[suite]' 'model = lenet' 'batch = 64' 'threads = 1' \
    'train_steps = 10' 'warmup = 0.01s' 'time_cap = 0.1s' 'min_samples = 2' \
    'timeout = 120s' '[amp]' 'precision = bf16' '[dp]' 'bucket_size = 16KiB' \
    '[sweep]' 'amp.loss_scale = none, dynamic' 'dp.engine = threads, mpi' \
    'dp.ranks = 1, 2' 'skip = dp.engine=threads dp.ranks=2' \
    'skip = dp.engine=mpi dp.ranks=1' >amp.ini
"$DLBENCH" --suite amp.ini --launcher "$launcher" --out amp >amp.txt 2>&1
ath='amp.loss_scale=none dp.engine=threads dp.ranks=1'
amp_mpi='amp.loss_scale=none dp.engine=mpi dp.ranks=2'
arec() { json amp/results.json "[r for r in d['records'] if r['id']=='$1'][0]$2"; }
if [ "$(status_of amp/results.json "$ath")" = skipped ] &&
   arec "$ath" "['reason']" | grep -q bf16; then
    echo "no bf16 here: amp + dp runs not checked ($(arec "$ath" "['reason']"))"
else
    ok "amp bf16 + dp threads ok" [ "$(status_of amp/results.json "$ath")" = ok ]
    ok "amp bf16 + dp mpi ok" [ "$(status_of amp/results.json "$amp_mpi")" = ok ]
    ok "... the same accuracy on both engines" \
        [ "$(arec "$ath" "['metrics']['accuracy']['value']")" = \
          "$(arec "$amp_mpi" "['metrics']['accuracy']['value']")" ]
    ok "... weights bit-identical (threads)" \
        [ "$(arec "$ath" "['metrics']['dp.weights_identical']['value']")" = 1.0 ]
fi
for e in 'dp.engine=threads dp.ranks=1' 'dp.engine=mpi dp.ranks=2'; do
    sid="amp.loss_scale=dynamic $e"
    ok "amp loss scaling + dp: skipped ($e)" [ "$(status_of amp/results.json "$sid")" = skipped ]
    ok "... naming both plugins" python3 -c \
        "import sys; r = sys.argv[1]; assert 'plugin dp' in r and 'plugin amp' in r, r" \
        "$(arec "$sid" "['reason']")"
done

# The launcher from the environment (a cluster's profile sets it once).
printf '#!/bin/sh\n# Leaves a mark per rank, then runs the rank.\ntouch "%s/ran.${OMPI_COMM_WORLD_RANK:-x}"\nexec "$@"\n' "$T" >mark.sh
DLBENCH_LAUNCHER="$launcher sh $T/mark.sh" "$DLBENCH" --suite "$SUITE" --quick \
    --set dp.engine=mpi --set dp.overlap=on --set train_steps=0 --out envl >/dev/null 2>&1
ok "DLBENCH_LAUNCHER starts the ranks" [ -e ran.0 ] && [ -e ran.1 ]
ok "... and the configuration runs" [ "$(status_of envl/results.json "$did")" = ok ]

# Merge refuses shards that do not belong together.
"$DLBENCH" merge s1 s1 --out twice >/dev/null 2>twice.txt
ok "merge refuses a shard twice (exit 2)" [ $? -eq 2 ]
"$DLBENCH" --suite "$SUITES/ok.ini" --shard 2/2 --out other >/dev/null 2>&1
"$DLBENCH" merge s1 other --out mixed >/dev/null 2>mixed.txt
ok "merge refuses shards of two suites (exit 2)" [ $? -eq 2 ]
ok "... naming both" grep -q "suite 'dp'.*suite 'ok'" mixed.txt
ok "... and writes nothing" [ ! -e mixed ]
# Shard 2/2 as another version of the suite file would leave it, and as
# a run with another --set would.
cp -r s2 edited
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["context"]["suite"]["crc32"] = "00000000"; json.dump(d, open(sys.argv[1], "w"))' edited/results.json
"$DLBENCH" merge s1 edited --out edits >/dev/null 2>edits.txt
ok "merge refuses another version of the suite (exit 2)" [ $? -eq 2 ]
ok "... by its hash" grep -q "suite hashes" edits.txt
cp -r s2 seeded
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["sets"].append("seed=7"); json.dump(d, open(sys.argv[1], "w"))' seeded/invocation.json
"$DLBENCH" merge s1 seeded --out seeds >/dev/null 2>seeds.txt
ok "merge refuses shards run with other --set (exit 2)" [ $? -eq 2 ]
finish
