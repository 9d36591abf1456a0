#!/bin/sh
# Benchmark, run by hand (not part of `make check`: about a minute per
# repetition on 2 cores, on a quiet machine): vgg-small at a global batch
# of 256, two MPI ranks of one thread each against one worker of one
# thread, buckets of 64 KiB with overlap on and off, and 25 MiB (one bucket)
# with overlap on. Targets on a 2-core machine: scaling efficiency >= 80%,
# overlap hiding >= half of the all-reduce time.
#
#   DLBENCH=build/dlbench DLBENCH_PLUGIN_PATH=build/plugins/.libs \
#   top_srcdir=. sh tests/bench/dp-scaling.sh [REPETITIONS]
#
# Prints each repetition's figures, then the median and range of each.
# Measured on an idle 2-core AMD EPYC: efficiency 99.7% (98.4-100.1) with
# 64 KiB buckets and overlap, 96.8% (96.3-99.3) of the all-reduce hidden.
# Repetitions that started while the machine was busy show it in their load
# average and in the one-worker throughput: leave them out.
set -u
: "${DLBENCH:?set DLBENCH to the dlbench binary}"
: "${top_srcdir:=.}"
reps=${1:-5}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/dp-scaling.XXXXXX")}
cat >"$out/dp-scaling.ini" <<INI
[suite]
name = dp-scaling
model = vgg-small
batch = 256
threads = 1
warmup = 2s
time_cap = 10s
min_samples = 10
timeout = 600s
[sweep]
dp.engine = threads, mpi
dp.ranks = 1, 2
dp.bucket_size = 64KiB, 25MiB
dp.overlap = on, off
skip = dp.engine=threads dp.ranks=2
skip = dp.engine=mpi dp.ranks=1
skip = dp.engine=threads dp.bucket_size=25MiB
skip = dp.engine=threads dp.overlap=off
skip = dp.bucket_size=25MiB dp.overlap=off
[dp]
replicas = 1
INI
i=1
while [ "$i" -le "$reps" ]; do
    DLBENCH_SUITE_PATH="$top_srcdir/suites" "$DLBENCH" --suite "$out/dp-scaling.ini" \
        --out "$out/run-$i" >"$out/run-$i.txt" 2>&1
    i=$((i + 1))
done
python3 - "$out" "$reps" <<'PY'
import json, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
rows = {}
for i in range(1, reps + 1):
    try:
        d = json.load(open(f"{out}/run-{i}/results.json"))
    except OSError:
        continue
    # The machine's load when the repetition started: a busy machine
    # gives two ranks more than their share of the CPUs' time.
    print(f"repetition {i}: load average {d['context'].get('loadavg')}")
    for r in d['records']:
        if r['status'] != 'ok':
            continue
        m = r['metrics']
        v = r.get('vs_baseline', {})
        f = rows.setdefault(r['id'], {})
        f.setdefault('throughput', []).append(r['throughput']['median'])
        if 'scaling_efficiency' in v:
            f.setdefault('efficiency %', []).append(100 * v['scaling_efficiency'])
        for k in ('dp.hidden_share', 'dp.reduced_in_backward',
                  'dp.allreduce_s', 'dp.exposed_s', 'dp.imbalance_s',
                  'dp.backward_s', 'dp.busbw'):
            if k in m:
                f.setdefault(k, []).append(m[k]['value'])
for rid, f in rows.items():
    print(rid)
    for k, v in f.items():
        print(f"  {k:16s} median {statistics.median(v):10.4g}  range "
              f"{min(v):.4g} .. {max(v):.4g}  (n={len(v)})  {['%.4g' % x for x in v]}")
PY
