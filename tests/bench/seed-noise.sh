#!/bin/sh
# Benchmark of accuracy, not of speed, run by hand: how much a suite's
# accuracies move between seeds at its training budget, the figure each
# shipped suite's accuracy_seeds is chosen from (doc/measurement.md,
# "Accuracy over seeds"). Runs SUITE with accuracy_seeds = N and a short
# speed measurement (its figures are not used), then prints per workload
# the baseline's accuracy over the seeds (mean, standard deviation) and,
# per setting, the paired differences against the baseline: their mean,
# standard deviation, the verdict's interval over the N seeds, and what a
# single seed's verdict would have said (the binomial interval alone, as
# dlbench judged before accuracy_seeds: "gain", "loss" or "none").
#
#   DLBENCH=build/dlbench DLBENCH_PLUGIN_PATH=build/plugins/.libs \
#   DLBENCH_SUITE_PATH=suites sh tests/bench/seed-noise.sh SUITE N [--quick] [--set K=V ...]
#
# The summary is also written to OUT/noise.json (OUT: $OUT, else a fresh
# folder under $TMPDIR).
set -u
: "${DLBENCH:?set DLBENCH to the dlbench binary}"
[ $# -ge 2 ] || { echo "usage: seed-noise.sh SUITE N [dlbench options]" >&2; exit 2; }
suite=$1
n=$2
shift 2
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/seed-noise.XXXXXX")}
mkdir -p "$out" || exit 1
start=$(date +%s)
"$DLBENCH" run "$suite" --out "$out/run" --set accuracy_seeds="$n" \
    --set warmup=0s --set time_cap=0.05s --set min_samples=2 "$@" \
    >"$out/run.out" 2>"$out/run.err"
rc=$?
echo "seed-noise: $suite at $n seeds: dlbench exited $rc after $(( $(date +%s) - start )) s" >&2
python3 - "$out/run/results.json" "$out/noise.json" <<'PY'
import json, math, statistics, sys
d = json.load(open(sys.argv[1]))
recs = {r['id']: r for r in d['records']}
sel = d.get('selection', {})
def accs(r):
    return {s['seed']: s['accuracy'] for s in r.get('seeds', []) if 'accuracy' in s}
def images(r):
    m = r.get('metrics', {}).get('test_images')
    return m['value'] if m else float('nan')
out = []
for g in sel.get('groups', []):
    base = recs.get(g['baseline'])
    if not base or not accs(base):
        continue
    b = accs(base)
    bv = list(b.values())
    row = {'workload': g['workload'], 'baseline': g['baseline'], 'seeds': len(bv),
           'baseline_mean': statistics.mean(bv),
           'baseline_sd': statistics.stdev(bv) if len(bv) > 1 else None,
           'baseline_range': [min(bv), max(bv)], 'settings': []}
    print(f"{g['workload'] or 'all'}: baseline {g['baseline']}: {len(bv)} seeds, "
          f"accuracy {row['baseline_mean']:.2f} (sd {row['baseline_sd'] or 0:.2f}, "
          f"{min(bv):.2f}-{max(bv):.2f})")
    for cid in g['configs']:
        r = recs.get(cid)
        if cid == g['baseline'] or not r or not accs(r):
            continue
        a = accs(r)
        diffs = [a[s] - b[s] for s in sorted(a) if s in b]
        if len(diffs) < 2:
            continue
        mean, sd = statistics.mean(diffs), statistics.stdev(diffs)
        # a single seed's verdict as dlbench gave it before seeds: the
        # binomial interval of the test images alone
        single = []
        for s in sorted(a):
            if s not in b:
                continue
            p, q, nimg = a[s] / 100, b[s] / 100, min(images(r), images(base))
            half = 100 * 1.96 * math.sqrt(p * (1 - p) / nimg + q * (1 - q) / nimg)
            dd = a[s] - b[s]
            single.append('gain' if dd - half > 0 else 'loss' if dd + half < 0 else 'none')
        pc = sel.get('per_config', {}).get(cid, {})
        row['settings'].append({'id': cid, 'diffs': diffs, 'mean': mean, 'sd': sd,
                                'interval': pc.get('accuracy_drop_ci'),
                                'effect': pc.get('accuracy_effect'),
                                'single_seed_verdicts': single})
        print(f"  {cid}: paired differences {', '.join(f'{x:+.2f}' for x in diffs)}: "
              f"mean {mean:+.2f}, sd {sd:.2f}; interval +-{pc.get('accuracy_drop_ci') or float('nan'):.2f} "
              f"({pc.get('accuracy_effect')}); one seed alone would have said: "
              f"{', '.join(single)}")
    out.append(row)
json.dump(out, open(sys.argv[2], 'w'), indent=1)
PY
echo "seed-noise: results in $out" >&2
exit $rc
