#!/bin/sh
# Benchmark, run by hand on a quiet machine (not part of `make check`): the
# spread between processes of one configuration, the figure that decides
# whether two runs agree. Each variant runs PROCS processes of LeNet
# training at batch 256 (train_steps = 0, time_cap 2 s), the variants
# alternating round by round, each round in a random order, so that a
# phase of the machine falls on all of them; a fixed-work control (the
# testload plugin's dependent floating-point chain, no memory traffic) runs
# in every round beside them and shows how much the machine itself drifts.
#
#   DLBENCH=build/dlbench DLBENCH_PLUGIN_PATH=build/plugins/.libs:build/tests/plugins/.libs \
#   top_srcdir=. sh tests/bench/spread.sh [VARIANT...]
#
# A variant is NAME, or NAME:ENV=VALUE (an environment setting for its
# processes); NAME is the malloc policy (steady, fresh, glibc). Default:
# steady fresh glibc steady:OMP_PROC_BIND=false (the last: the backend's
# threads left unpinned). PROCS (6) processes per variant; MODEL (lenet),
# BATCH (256) and TIME_CAP (2s) choose the configuration.
#
# Prints, per variant and for the control, each process's median step time
# in ms, their median and the spread max/min - 1; exits 1 when the first
# variant's spread is above 10% (the target for what dlbench controls).
set -u
: "${DLBENCH:?set DLBENCH to the dlbench binary}"
: "${top_srcdir:=.}"
[ $# -gt 0 ] || set -- steady fresh glibc steady:OMP_PROC_BIND=false
procs=${PROCS:-6}
model=${MODEL:-lenet}
batch=${BATCH:-256}
cap=${TIME_CAP:-2s}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/spread.XXXXXX")}
DLBENCH_SUITE_PATH="$top_srcdir/suites${DLBENCH_SUITE_PATH:+:$DLBENCH_SUITE_PATH}"
export DLBENCH_SUITE_PATH

# The control: fixed work, about 5 ms a step.
cat >"$out/control.ini" <<'EOF'
[suite]
name = control
workload = testload
warmup = 0.2s
time_cap = 2s

[testload]
work = 2000000
EOF

# median_ms DIR: the run's median step time in ms ("failed" if none).
median_ms() {
    python3 -c "
import json, sys
try:
    r = json.load(open(sys.argv[1] + '/results.json'))['records'][0]
    print('%.3f' % (r['stats']['median'] * 1e3))
except Exception:
    print('failed')" "$1"
}

# run_variant SPEC DIR: one process of the variant.
run_variant() {
    name=${1%%:*}
    envs=
    case $1 in *:*) envs=${1#*:} ;; esac
    # shellcheck disable=SC2086 # envs is a word list of NAME=VALUE
    env $envs "$DLBENCH" run baseline --set model="$model" --set batch="$batch" \
        --set train_steps=0 --set time_cap="$cap" --set malloc="$name" \
        --format json --out "$2" >/dev/null 2>"$2.err"
}

round=1
while [ "$round" -le "$procs" ]; do
    # this round's order: the variants and the control, shuffled
    order=$( (for v in "$@" control; do echo "$v"; done) |
             awk -v s="$round" 'BEGIN { srand(s) } { print rand() "\t" $0 }' |
             sort -n | cut -f2)
    for v in $order; do
        d="$out/$(echo "$v" | tr ':=' '__')-$round"
        if [ "$v" = control ]; then
            "$DLBENCH" run "$out/control.ini" --format json --out "$d" >/dev/null 2>"$d.err"
        else
            run_variant "$v" "$d"
        fi
        median_ms "$d" >>"$out/$(echo "$v" | tr ':=' '__').ms"
    done
    round=$((round + 1))
done

status=0
first=1
printf '%-32s %-60s %9s %8s\n' variant "process medians (ms)" median spread
for v in "$@" control; do
    f="$out/$(echo "$v" | tr ':=' '__').ms"
    line=$(python3 -c "
import sys, statistics
v = [l.strip() for l in open(sys.argv[1])]
ok = [float(x) for x in v if x != 'failed']
if len(ok) < 2:
    print('%-60s %9s %8s' % (' '.join(v), '-', '-')); sys.exit(2)
spread = max(ok) / min(ok) - 1
print('%-60s %9.3f %7.1f%%' % (' '.join(v), statistics.median(ok), 100 * spread))
sys.exit(1 if spread > 0.10 else 0)" "$f")
    rc=$?
    printf '%-32s %s\n' "$v" "$line"
    [ "$first" -eq 1 ] && [ "$rc" -ne 0 ] && status=1
    first=0
done
echo "runs in $out"
exit $status
