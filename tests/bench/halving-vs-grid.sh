#!/bin/sh
# Benchmark, run by hand on a quiet machine (not part of `make check`: the
# full amp suite takes about ten minutes on 2 cores): each suite named runs
# twice, with `search = grid` (every configuration, full budget) and with
# `search = halving` (successive halving: brief speed-only screening
# rounds, then the full budget for the finalists and the baseline). The
# target: halving picks the grid's winner (or a configuration the grid
# itself calls tied with it) in at most half the grid's wall time.
#
#   DLBENCH=build/dlbench DLBENCH_PLUGIN_PATH=build/plugins/.libs \
#   top_srcdir=. sh tests/bench/halving-vs-grid.sh [SUITE...]   (default amp)
#
# Prints one line per suite: both wall times, their ratio, both winners and
# the verdict; exits 1 when a suite misses the target.
set -u
: "${DLBENCH:?set DLBENCH to the dlbench binary}"
: "${top_srcdir:=.}"
[ $# -gt 0 ] || set -- amp
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/halving-vs-grid.XXXXXX")}
DLBENCH_SUITE_PATH="$top_srcdir/suites${DLBENCH_SUITE_PATH:+:$DLBENCH_SUITE_PATH}"
export DLBENCH_SUITE_PATH

now() { date +%s.%N; }

# The winner and the grid's ties, one per line, from a run directory.
winners() {
    python3 - "$1/results.json" <<'PY'
import json, sys
sel = json.load(open(sys.argv[1])).get("selection") or {}
print(sel.get("winner") or "-")
for t in sel.get("ties") or []:
    print(t if isinstance(t, str) else t.get("config", "-"))
PY
}

fail=0
printf '%-12s %10s %10s %7s  %s\n' suite grid_s halving_s ratio verdict
for suite in "$@"; do
    for s in grid halving; do
        t0=$(now)
        "$DLBENCH" --suite "$suite" --set search=$s --out "$out/$suite-$s" \
            >"$out/$suite-$s.log" 2>&1
        rc=$?
        t1=$(now)
        eval "t_$s=\$(echo \"\$t1 - \$t0\" | bc)"
        if [ $rc -gt 1 ] || [ ! -f "$out/$suite-$s/results.json" ]; then
            echo "$suite: search=$s failed (exit $rc); see $out/$suite-$s.log"
            fail=1
            continue 2
        fi
    done
    grid_w=$(winners "$out/$suite-grid" | head -1)
    halv_w=$(winners "$out/$suite-halving" | head -1)
    ratio=$(echo "scale=3; $t_halving / $t_grid" | bc)
    if [ "$halv_w" = "$grid_w" ]; then
        same="same winner"
    elif winners "$out/$suite-grid" | tail -n +2 | grep -qxF "$halv_w"; then
        same="tied with the grid's winner"
    else
        same="DIFFERENT winner"
        fail=1
    fi
    if [ "$(echo "$ratio <= 0.5" | bc)" -ne 1 ]; then
        fail=1
        same="$same, TOO SLOW"
    fi
    printf '%-12s %10.1f %10.1f %7s  %s\n' "$suite" "$t_grid" "$t_halving" \
        "$ratio" "$same"
    echo "  grid:    $grid_w"
    echo "  halving: $halv_w"
done
echo "runs in $out"
exit $fail
