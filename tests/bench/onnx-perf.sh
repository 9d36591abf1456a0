#!/bin/sh
# Benchmark, run by hand on a quiet machine (not part of `make check`): an
# ONNX model exported from torchvision (NET, default resnet50; random
# weights), fp32 inference on the CPU, in dlbench (cpu backend, the model
# imported from the .onnx), PyTorch eager and onnxruntime (both from PyPI,
# the venv of tests/bench/onnx-vs-torch.sh), in one sitting: ROUNDS (3)
# rounds, each running every tool once per batch size in its own process,
# alternating. Batch 1: the median call time (the latency p50); batch 32:
# images/s from the median call time. Prints per tool and batch the median
# over the rounds and the range between processes, and each tool against
# onnxruntime.
#
#   top_srcdir=. DLBENCH=build/dlbench sh tests/bench/onnx-perf.sh --venv DIR [OUT]
#
# NET, BATCHES ("1 32"), SECONDS_EACH (15: each measurement's timed
# part), THREADS (nproc: every tool gets as many), DLBENCH_BEFORE (another
# build's dlbench, run in the same rotation as "before": a change's A/B),
# INI (a shipped model file, suites/models/INI.ini, the same network: run
# in the rotation as "ini", and "ini-before" with DLBENCH_BEFORE; its
# weights are a one-step reference training's, so that its batch norms
# hold statistics that are not the identity), TOOLS (which of dlbench,
# before, ini, ini-before, torch, ort run; all by default).
set -u
: "${top_srcdir:=.}"
: "${DLBENCH:=dlbench}"
venv=
[ "${1:-}" = --venv ] && { venv=$2; shift 2; }
[ -n "$venv" ] && [ -x "$venv/bin/python" ] || { echo "onnx-perf: --venv DIR: a venv with torch, torchvision and onnxruntime (tests/bench/onnx-vs-torch.sh makes one)" >&2; exit 2; }
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/onnx-perf.XXXXXX")}
net=${NET:-resnet50}
batches=${BATCHES:-1 32}
rounds=${ROUNDS:-3}
seconds=${SECONDS_EACH:-15}
threads=${THREADS:-$(nproc)}
py=$venv/bin/python
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out" || exit 2
model=$out/$net.onnx
[ -f "$model" ] || "$py" "$here/onnx_perf.py" export "$net" "$model" || exit 1
: >"$out/times.jsonl"
r=1
while [ "$r" -le "$rounds" ]; do
    for b in $batches; do
        for who in dlbench ${DLBENCH_BEFORE:+before} ${INI:+ini} \
                   ${INI:+${DLBENCH_BEFORE:+ini-before}} torch ort; do
            case " ${TOOLS:-$who} " in *" $who "*) ;; *) continue ;; esac
            if [ "$who" != torch ] && [ "$who" != ort ]; then
                exe=$DLBENCH
                case $who in *before) exe=$DLBENCH_BEFORE ;; esac
                mf=$model steps=
                case $who in ini*) mf=$(cd "$top_srcdir" && pwd)/suites/models/$INI.ini steps='train_steps = 1' ;; esac
                printf '%s\n' '[suite]' "name = onnx-perf" 'mode = infer' "model = $mf" \
                    'backend = cpu' "batch = $b" 'measure_only = on' 'warmup = 2s' \
                    "time_cap = ${seconds}s" 'min_samples = 10' 'ci_target = 0.005' \
                    'timeout = 900s' "threads = $threads" ${steps:+"$steps"} >"$out/suite.ini"
                d=$out/$who-$b-$r
                rm -rf "$d"
                "$exe" --plugin-dir "$(dirname "$exe")/plugins/.libs" --suite "$out/suite.ini" \
                    --out "$d" >"$d.log" 2>&1 || { echo "onnx-perf: dlbench failed ($d.log)" >&2; exit 1; }
                python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["records"][0]; s = r["stats"]
print(json.dumps({"who": sys.argv[3], "batch": int(sys.argv[2]), "median_s": s["median"], "p10_s": None, "p90_s": s["p95"], "calls": s["n"]}))' \
                    "$d/results.json" "$b" "$who" >>"$out/times.jsonl" || exit 1
            else
                "$py" "$here/onnx_perf.py" time "$who" "$net" "$model" "$b" "$seconds" "$threads" \
                    >>"$out/times.jsonl" 2>"$out/$who-$b-$r.log" || { echo "onnx-perf: $who failed ($out/$who-$b-$r.log)" >&2; exit 1; }
            fi
            echo "round $r: $who batch $b done" >&2
        done
    done
    r=$((r + 1))
done
python3 - "$out/times.jsonl" "$net" "$threads" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
n = max(len([r for r in rows if r['who'] == 'ort' and r['batch'] == rows[0]['batch']]), 1) if rows else 0
print('%s fp32 inference, %s threads, %d processes per tool and batch' % (sys.argv[2], sys.argv[3], n))
print('%-10s %-6s %-30s %-30s %s' % ('tool', 'batch', 'median call ms (range)', 'images/s (range)', 'vs onnxruntime'))
med = {}
for b in sorted({r['batch'] for r in rows}):
    tools = ('dlbench', 'before', 'ini', 'ini-before', 'torch', 'ort')
    for who in tools:
        t = [r['median_s'] for r in rows if r['who'] == who and r['batch'] == b]
        if t:
            med[who, b] = statistics.median(t)
    for who in tools:
        t = [r['median_s'] for r in rows if r['who'] == who and r['batch'] == b]
        if not t:
            continue
        m = med[who, b]
        vs = '%.2fx' % (med['ort', b] / m) if ('ort', b) in med else '-'
        print('%-10s %-6d %-30s %-30s %s' % (who, b, '%.2f (%.2f-%.2f)' % (m * 1e3, min(t) * 1e3, max(t) * 1e3),
              '%.1f (%.1f-%.1f)' % (b / m, b / max(t), b / min(t)), vs))
PY
