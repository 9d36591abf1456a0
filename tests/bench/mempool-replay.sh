#!/bin/sh
# Benchmark, run by hand on a quiet machine (not part of `make check`,
# whose tests/integration/mempool.sh checks the counts that make the pool
# fast, not its speed): suites/mempool-replay.ini in --quick form, one
# LeNet training step's allocation trace replayed through the allocator
# hook, with the pool (caching) and with glibc's malloc+free.
#
#   DLBENCH=build/dlbench DLBENCH_PLUGIN_PATH=build/plugins/.libs \
#   top_srcdir=. sh tests/bench/mempool-replay.sh
#
# DLBENCH_ARGS adds options to the run (e.g. "--set time_cap=3s").
# Prints the cost of an alloc+free pair on each row and the pool's
# speedup over malloc+free; exits 1 below the suite's target, 3x.
set -u
: "${DLBENCH:?set DLBENCH to the dlbench binary}"
: "${top_srcdir:=.}"
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/mempool-replay.XXXXXX")}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); run directory $out/run" >&2
# The suite names its trace relative to the source tree.
(cd "$top_srcdir" && "$DLBENCH" --quick --suite suites/mempool-replay.ini \
    ${DLBENCH_ARGS:-} --out "$out/run" >/dev/null 2>"$out/run.err") ||
    { cat "$out/run.err" >&2; exit 1; }
python3 - "$out/run/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
tp = {r["id"]: r["throughput"]["median"] for r in d["records"] if r["status"] == "ok"}
for k, v in tp.items():
    print(f"{1e9 / v:8.1f} ns a pair  {k}")
off = [v for k, v in tp.items() if "enable=off" in k][0]
on = [v for k, v in tp.items()
      if "enable=on" in k and "caching" in k and "release=never" in k and "lock=on" in k][0]
print(f"the pool (caching, lock on) against malloc+free: {on / off:.1f}x (target 3x)")
sys.exit(0 if on >= 3 * off else 1)
PY
