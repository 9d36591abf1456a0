#!/bin/sh
# Benchmark, run by hand on a quiet machine (not part of `make check`): how
# often the A/B gate (ci/perf-check --against) raises an alarm when nothing
# changed, and how often it catches a real slowdown. Each case runs the
# gate RUNS times (10) and counts the runs that exited 1:
#
#   aa      HEAD against the same commit built again: every alarm is false
#   slow10  the testload control workload with 10% more work on the test
#           side (testload.work 2,000,000 -> 2,200,000, a dependent chain:
#           exactly 10% more instructions a step)
#   o0      the working tree built with CFLAGS=-O0 (LeNet training about
#           2.4x slower a step) against HEAD
#
#   top_srcdir=. BUILD=build sh tests/bench/gate-power.sh aa|slow10|o0 [RUNS]
#
# BUILD is a configured build of the working tree (its tests/plugins are
# built for slow10: make check or make tests/plugins/testload.la).
# PASSES (8) and THRESHOLD (5) are given to the gate; GATE_SUITES
# (baseline,infer) for aa and o0. Prints one line per gate run (exit
# status, seconds, the compare summary) and the count; exits 1 when aa
# has more than one alarm, or slow10 or o0 misses more than allowed
# (slow10: 1 of 10, o0: none).
set -u
: "${top_srcdir:=.}"
: "${BUILD:=build}"
case=${1:?which case: aa, slow10 or o0}
runs=${2:-10}
passes=${PASSES:-8}
threshold=${THRESHOLD:-5}
suites=${GATE_SUITES:-baseline,infer}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/gate-power.XXXXXX")}
mkdir -p "$out" || exit 2
cache=${CACHE:-$out/cache}
build=$(cd "$BUILD" && pwd) || exit 2
top=$(cd "$top_srcdir" && pwd) || exit 2
set --
case $case in
aa) set -- --new-build "$build" --suites "$suites" ;;
slow10)
    [ -f "$build/tests/plugins/.libs/testload.so" ] ||
        { echo "gate-power: build $build/tests/plugins first (make tests/plugins/testload.la)" >&2; exit 2; }
    mkdir -p "$out/suites"
    cat >"$out/suites/control.ini" <<'EOF'
[suite]
name = control
description = fixed work: a dependent floating-point chain
workload = testload
warmup = 0.2s
time_cap = 1s

[testload]
work = 2000000
EOF
    DLBENCH_SUITE_PATH="$out/suites" DLBENCH_PLUGIN_PATH="$build/tests/plugins/.libs"
    export DLBENCH_SUITE_PATH DLBENCH_PLUGIN_PATH
    set -- --new-build "$build" --suites control --set-new testload.work=2200000 ;;
o0)
    o0=$cache/o0-build
    if [ ! -x "$o0/dlbench" ]; then
        echo "gate-power: building the working tree with CFLAGS=-O0 in $o0" >&2
        mkdir -p "$o0" &&
        (cd "$o0" && "$top/configure" --without-cuda CFLAGS=-O0 && make -j"$(nproc)") \
            >"$out/o0-build.log" 2>&1 || { tail -n 20 "$out/o0-build.log"; exit 2; }
    fi
    set -- --new-build "$o0" --suites "$suites" ;;
*) echo "gate-power: unknown case '$case' (aa, slow10 or o0)" >&2; exit 2 ;;
esac

alarms=0
k=1
while [ "$k" -le "$runs" ]; do
    t0=$(date +%s)
    sh "$top/ci/perf-check" --against HEAD --passes "$passes" --threshold "$threshold" \
        --seed "$k" --cache "$cache" --out "$out/gate-$k" "$@" >"$out/gate-$k.log" 2>&1
    rc=$?
    [ "$rc" -eq 1 ] && alarms=$((alarms + 1))
    echo "gate $k: exit $rc, $(( $(date +%s) - t0 )) s; $(grep -h 'slower,' "$out/gate-$k"/*/compare.txt 2>/dev/null | tr '\n' ' ')"
    k=$((k + 1))
done
echo "$case: $alarms alarm(s) in $runs gate runs (runs in $out)"
case $case in
aa) [ "$alarms" -le 1 ] ;;
slow10) [ "$alarms" -ge $((runs - runs / 10)) ] ;;
o0) [ "$alarms" -eq "$runs" ] ;;
esac
