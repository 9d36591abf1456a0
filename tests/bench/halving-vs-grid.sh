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
# DLBENCH_ARGS adds options to every run, e.g. "--set repetitions=3".
# GRID_RUNS=N runs the grid N times (default 1). Where configurations are
# near-equal, a noisy machine can make the grid's own winner change from
# run to run (two grid runs of amp and two of quant did here, with one
# process per configuration); the winner
# and ties of every grid run then count as the grid's answer, and the
# line says whether the grid runs agreed with each other. The grid time
# printed is the first run's.
#
# Prints one line per suite: both wall times, their ratio, the verdict,
# then each grid run's winner, halving's, and what halving's winner
# measured in the first grid run against that run's winner; exits 1 when
# a suite misses the target.
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

# The throughput medians of configuration $2 and of the run's winner in
# run directory $1: "THIS WINNER".
tput_of() {
    python3 - "$1/results.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
w = (d.get("selection") or {}).get("winner")
t = {r.get("id"): (r.get("throughput") or {}).get("median") for r in d["records"]}
print(t.get(sys.argv[2]) or 0, t.get(w) or 0)
PY
}

runs=${GRID_RUNS:-1}
fail=0
printf '%-12s %10s %10s %7s  %s\n' suite grid_s halving_s ratio verdict
for suite in "$@"; do
    dirs=""
    for k in $(seq "$runs") halving; do
        case $k in
        halving) d=$suite-halving s=halving ;;
        1) d=$suite-grid s=grid ;;
        *) d=$suite-grid$k s=grid ;;
        esac
        t0=$(now)
        # shellcheck disable=SC2086 # DLBENCH_ARGS is a list of words
        "$DLBENCH" --suite "$suite" --set search=$s ${DLBENCH_ARGS:-} --out "$out/$d" \
            >"$out/$d.log" 2>&1
        rc=$?
        t1=$(now)
        case $k in
        halving) t_halving=$(echo "$t1 - $t0" | bc) ;;
        1) t_grid=$(echo "$t1 - $t0" | bc); dirs=$d ;;
        *) dirs="$dirs $d" ;;
        esac
        if [ $rc -gt 1 ] || [ ! -f "$out/$d/results.json" ]; then
            echo "$suite: search=$s failed (exit $rc); see $out/$d.log"
            fail=1
            continue 2
        fi
    done
    halv_w=$(winners "$out/$suite-halving" | head -1)
    ratio=$(echo "scale=3; $t_halving / $t_grid" | bc)
    same="DIFFERENT winner"
    grid_ws=""
    for d in $dirs; do
        w=$(winners "$out/$d" | head -1)
        grid_ws="$grid_ws$w
"
        if [ "$halv_w" = "$w" ]; then
            same="same winner"
        elif [ "$same" = "DIFFERENT winner" ] &&
            winners "$out/$d" | tail -n +2 | grep -qxF "$halv_w"; then
            same="tied with the grid's winner"
        fi
    done
    [ "$same" = "DIFFERENT winner" ] && fail=1
    if [ "$runs" -gt 1 ]; then
        if [ "$(printf '%s' "$grid_ws" | sort -u | wc -l)" -eq 1 ]; then
            same="$same; the $runs grid runs agreed"
        else
            same="$same; the $runs grid runs DISAGREED"
        fi
    fi
    if [ "$(echo "$ratio <= 0.5" | bc)" -ne 1 ]; then
        fail=1
        same="$same, TOO SLOW"
    fi
    printf '%-12s %10.1f %10.1f %7s  %s\n' "$suite" "$t_grid" "$t_halving" \
        "$ratio" "$same"
    printf '%s' "$grid_ws" | sed 's/^/  grid:    /'
    echo "  halving: $halv_w"
    tp=$(tput_of "$out/$suite-grid" "$halv_w")
    echo "  in the first grid run, halving's winner measured ${tp% *}" \
        "samples/s, that run's winner ${tp#* }"
done
echo "runs in $out"
exit $fail
