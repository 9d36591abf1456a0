#!/bin/sh
# Benchmark, run by hand (not part of `make check`: about two minutes): the
# 200 configurations of tests/integration/suites/many.ini in --quick form
# (a testload workload measured for half a second each), and what the
# harness adds to them.
#
#   DLBENCH=build/dlbench DLBENCH_PLUGIN_PATH=build/tests/plugins/.libs \
#   top_srcdir=. sh tests/bench/many.sh
#
# A configuration's own time is its record's wall_s: from just before the
# parent's fork() to the child's reaping, so the child's exec, dynamic
# loading, suite parsing and plugin start-up count as the configuration's.
# The harness's overhead is the run's wall time, measured from outside,
# less the sum of those: parsing and planning, the run directory, starting
# each child, the journal, and at the end selection, results, report and
# plots. Parent memory is VmRSS from /proc, sampled every 5 ms, when the
# journal first holds N records (tests/integration/harness-load.py).
#
# doc/measurement.md ("What the harness itself costs") has the figures,
# measured on 2 shared cores:
# the harness's own share 0.67-0.75% with gnuplot drawing the row plots
# (60 of the 200 rows), parent VmRSS 7680-7704 KiB after 20
# configurations and 7768-7792 KiB after 199.
#
# Exits 1 when the harness's share while the sweep runs (set-up and the
# gaps between configurations) reaches 1%, or in all 15%: the limits
# tests/integration/many.sh held make check to before they moved here (a
# wall-clock share that a loaded machine stretches, most of all at the
# end, where each plot is a gnuplot process).
set -u
: "${DLBENCH:?set DLBENCH to the dlbench binary}"
: "${top_srcdir:=.}"
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/many.XXXXXX")}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); run directory $out/run" >&2
python3 "$top_srcdir/tests/integration/harness-load.py" "$out/run" "$DLBENCH" \
    --suite "$top_srcdir/tests/integration/suites/many.ini" --quick >"$out/load.json" ||
    exit 1
python3 - "$out/load.json" "$out/run" <<'PY'
import json, sys
fail = False
d = json.load(open(sys.argv[1]))
c = d["configs_s"]
rss = {int(k): v for k, v in d["rss_kib"].items()}
n = d["records"]
def at(k):
    # the memory while configuration k+1 runs, k records behind it
    return rss[max(j for j in rss if j <= k)]
print(f"exit status {d['rc']}, {n} configurations")
print(f"run {d['wall_s']:.2f} s, configurations {c:.2f} s "
      f"({c / n * 1e3:.0f} ms each)")
print(f"harness overhead {d['overhead_s']:.3f} s = {100 * d['overhead_s'] / c:.2f}% "
      f"of the configurations' time (under 15%)")
for k in ("setup_s", "between_s", "post_s"):
    if k in d:
        print(f"  {k[:-2]:8s} {d[k]:.3f} s = {100 * d[k] / c:.3f}%")
if "setup_s" in d:
    run = d["setup_s"] + d["between_s"]
    print(f"  while the sweep runs (setup + between): {100 * run / c:.3f}% (under 1%)")
    fail |= 100 * run / c >= 1
fail |= 100 * d["overhead_s"] / c >= 15
print("parent VmRSS: " + ", ".join(f"{at(k)} KiB after {k}" for k in (1, 20, 100, n - 1)
                                   if k <= n))
sys.exit(1 if fail or d["rc"] != 0 else 0)
PY
verdict=$?
# The end of the run alone, twice over a copy (--resume with nothing left
# to run): with the plots, and without gnuplot, which splits the time at
# the end between the parent's own work and gnuplot drawing.
for how in with without; do
    rm -rf "$out/post-$how"
    cp -r "$out/run" "$out/post-$how"
    [ $how = without ] && g=/nonexistent || g=${DLBENCH_GNUPLOT:-gnuplot}
    t0=$(date +%s.%N)
    DLBENCH_GNUPLOT=$g "$DLBENCH" --resume "$out/post-$how" >/dev/null 2>&1
    t1=$(date +%s.%N)
    echo "the end of the run alone, $how gnuplot: $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") s"
done
exit $verdict
