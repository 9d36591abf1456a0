#!/bin/sh
# Benchmark, run by hand on a quiet machine (not part of `make check`):
# inference of the shipped networks in fp32 and in bf16 (plugin amp), on
# the cpu backend, one process per measurement, alternating: ROUNDS (3)
# rounds, each running every network, batch, precision and build once.
# With DLBENCH_BEFORE (another build's dlbench) each measurement runs in
# both builds, side by side: a change's A/B. Prints per network, batch,
# precision and build the median call time over the rounds with the range
# between processes, images/s, and bf16 against fp32 of the same build.
#
#   top_srcdir=. DLBENCH=build/dlbench sh tests/bench/amp-infer.sh [OUT]
#
# NETS ("mobilenet-v2 resnet50": model files under suites/models/),
# BATCHES ("1 32"), SECONDS_EACH (10: each measurement's timed part),
# THREADS (nproc). The weights are a one-step reference training's (cached
# per model file), so that the batch norms hold statistics that are not
# the identity; the images are synthetic (the networks take 3x224x224).
set -u
: "${top_srcdir:=.}"
: "${DLBENCH:=dlbench}"
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/amp-infer.XXXXXX")}
nets=${NETS:-mobilenet-v2 resnet50}
batches=${BATCHES:-1 32}
rounds=${ROUNDS:-3}
seconds=${SECONDS_EACH:-10}
threads=${THREADS:-$(nproc)}
models=$(cd "$top_srcdir/suites/models" && pwd) || exit 2
mkdir -p "$out" || exit 2
: >"$out/times.jsonl"
r=1
while [ "$r" -le "$rounds" ]; do
    for net in $nets; do
        for b in $batches; do
            for p in fp32 bf16; do
                for who in after ${DLBENCH_BEFORE:+before}; do
                    exe=$DLBENCH
                    [ "$who" = before ] && exe=$DLBENCH_BEFORE
                    printf '%s\n' '[suite]' 'name = amp-infer' 'mode = infer' \
                        "model = $models/$net.ini" 'backend = cpu' "batch = $b" \
                        'train_steps = 1' 'measure_only = on' 'plugins = amp' \
                        'warmup = 2s' "time_cap = ${seconds}s" \
                        'min_samples = 10' 'ci_target = 0.005' 'timeout = 900s' \
                        "threads = $threads" '[sweep]' "amp.precision = $p" >"$out/suite.ini"
                    d=$out/$net-$b-$p-$who-$r
                    rm -rf "$d"
                    "$exe" --plugin-dir "$(dirname "$exe")/plugins/.libs" \
                        --suite "$out/suite.ini" --out "$d" >"$d.log" 2>&1 ||
                        { echo "amp-infer: dlbench failed ($d.log)" >&2; exit 1; }
                    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["records"][0]
assert r["status"] == "ok", r["status"]
print(json.dumps({"net": sys.argv[2], "batch": int(sys.argv[3]), "prec": sys.argv[4],
                  "who": sys.argv[5], "median_s": r["stats"]["median"]}))' \
                        "$d/results.json" "$net" "$b" "$p" "$who" >>"$out/times.jsonl" ||
                        { echo "amp-infer: no figure in $d" >&2; exit 1; }
                    echo "round $r: $net batch $b $p $who done" >&2
                done
            done
        done
    done
    r=$((r + 1))
done
python3 - "$out/times.jsonl" "$threads" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print('inference on the cpu backend, %s threads, medians over the rounds (range between processes)' % sys.argv[2])
print('%-14s %-6s %-6s %-7s %-26s %-24s %s' % ('network', 'batch', 'prec', 'build', 'ms a call', 'images/s', 'bf16/fp32'))
keys = sorted({(r['net'], r['batch'], r['who']) for r in rows})
for net, b, who in keys:
    med = {}
    for p in ('fp32', 'bf16'):
        t = [r['median_s'] for r in rows if (r['net'], r['batch'], r['who'], r['prec']) == (net, b, who, p)]
        if not t:
            continue
        m = med[p] = statistics.median(t)
        ratio = '%.2fx' % (med['fp32'] / m) if p == 'bf16' and 'fp32' in med else ''
        print('%-14s %-6d %-6s %-7s %-26s %-24s %s' % (net, b, p, who,
              '%.2f (%.2f-%.2f)' % (m * 1e3, min(t) * 1e3, max(t) * 1e3),
              '%.1f (%.1f-%.1f)' % (b / m, b / max(t), b / min(t)), ratio))
PY
