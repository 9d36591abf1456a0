#!/bin/sh
# Benchmark, run by hand on a quiet machine (not part of `make check`: on a
# loaded machine the ratio moves, 2.39 was seen under make -j2 check): the
# testload workload at twice the work, on the machine's clock, must
# measure twice the time, within 10% (1.8-2.2x, medians of the same run),
# and the timer's cost must stay under 0.1% of a sample. make check's
# tests/integration/scaling.sh checks the same on testload's synthetic
# clock, where both hold exactly.
#
#   DLBENCH=build/dlbench DLBENCH_PLUGIN_PATH=build/tests/plugins/.libs \
#   top_srcdir=. sh tests/bench/scaling.sh
#
# Prints the ratio, both medians and the timer's share; exits 1 when the
# ratio is outside 1.8-2.2 or the timer's share reaches 0.1%.
set -u
: "${DLBENCH:?set DLBENCH to the dlbench binary}"
: "${top_srcdir:=.}"
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/scaling.XXXXXX")}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); run directory $out/run" >&2
"$DLBENCH" --suite "$top_srcdir/tests/integration/suites/scaling.ini" --out "$out/run" \
    >/dev/null 2>"$out/run.err" || { cat "$out/run.err" >&2; exit 1; }
python3 - "$out/run/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
a, b = d["records"]
ratio = b["stats"]["median"] / a["stats"]["median"]
print(f"{a['id']}: median {a['stats']['median'] * 1e6:.1f} us; "
      f"{b['id']}: median {b['stats']['median'] * 1e6:.1f} us")
print(f"time ratio for twice the work: {ratio:.3f} (target 1.8-2.2)")
fail = not 1.8 <= ratio <= 2.2
for r in (a, b):
    m = r["measure"]
    share = m["timer_overhead_s"] / (r["stats"]["median"] * m["steps_per_sample"])
    print(f"{r['id']}: timer {m['timer_overhead_s'] * 1e9:.1f} ns, "
          f"{m['steps_per_sample']} step(s) a sample: {100 * share:.4f}% (under 0.1%)")
    fail |= share >= 0.001
sys.exit(1 if fail else 0)
PY
