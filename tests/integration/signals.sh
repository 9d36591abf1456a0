#!/bin/sh
# SIGINT or SIGTERM to dlbench: the configuration in progress is stopped and
# reaped, the journal keeps what finished, results and a partial report are
# written, the exit status is 128 + the signal, and --resume finishes the
# run with every configuration exactly once. A hanging configuration does
# not delay the stop until its timeout: it is not journaled (a timeout
# would be), and the stop comes within half the timeout, a bound that
# leaves a loaded machine (results, report and plots are written on the
# way out) many times what a quiet one takes, about a second.
. "${top_srcdir:-.}/tests/integration/lib.sh"

# A background job of a non-interactive shell starts with SIGINT ignored,
# and dlbench keeps an ignored signal ignored (as nohup expects): start it
# with the default disposition, as a terminal would.
start() {
    python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$DLBENCH" "$@" &
    pid=$!
}

# No process started for run directory $1 is still running.
none_left() {
    ! ps -eo args= | grep -F -- "$1/suite.ini" | grep -v grep
}

# wait_for FILE: until FILE exists and is not empty (30 s at most): on a
# loaded machine, a fixed sleep could signal dlbench before it runs.
wait_for() {
    i=0
    while [ $i -lt 300 ] && [ ! -s "$1" ]; do
        sleep 0.1
        i=$((i + 1))
    done
}

# first_done DIR: a configuration is journaled, and a moment more, so the
# signal lands in the middle of the next one.
first_done() {
    wait_for "$1/journal.jsonl"
    sleep 0.3
}

# started DIR: the first configuration's process is running.
started() {
    i=0
    while [ $i -lt 300 ] && [ ! -e "$1/logs/config-0.log" ]; do
        sleep 0.1
        i=$((i + 1))
    done
    sleep 0.3
}

# stop SIGNAME STATUS: interrupt a run after its first configuration,
# check it, resume it.
stop() {
    d=$T/run-$1
    start --suite "$SUITES/signals.ini" --out "$d" >"$1.out" 2>"$1.err"
    first_done "$d"
    kill -s "$1" "$pid"
    t0=$(date +%s)
    wait "$pid"
    rc=$?
    took=$(($(date +%s) - t0))
    ok "$1: exit status $2 (got $rc)" [ "$rc" -eq "$2" ]
    ok "$1: stopped within 30 s, half the timeout ($took s)" [ "$took" -lt 30 ]
    ok "$1: no process of the run left" none_left "$d"
    ok "$1: says it was interrupted and how to go on" \
        grep -q "interrupted by SIG$1: .* not run; finish with: dlbench --resume $d" "$1.err"
    n=$(wc -l <"$d/journal.jsonl")
    ok "$1: the journal kept what finished ($n of 6)" [ "$n" -ge 1 ] && [ "$n" -lt 6 ]
    ok "$1: every journal line whole" python3 -c "
import json
for l in open('$d/journal.jsonl'): assert json.loads(l)['status'] == 'ok'"
    ok "$1: results.json holds the finished ones" \
        [ "$(json "$d/results.json" "len(d['records'])")" -eq "$n" ]
    ok "$1: a partial report" [ -s "$d/report.md" ] && [ -s "$d/table.txt" ]
    ok "$1: no temporary file left" sh -c "! ls -a '$d' | grep -q '\.tmp'"
    "$DLBENCH" --resume "$d" >/dev/null 2>"$1-resume.err"
    ok "$1: --resume exits 0" [ $? -eq 0 ]
    ok "$1: each configuration exactly once" python3 -c "
import json, sys
idx = sorted(json.loads(l)['index'] for l in open('$d/journal.jsonl'))
sys.exit(idx != list(range(6)))"
    ok "$1: results.json has all six" [ "$(json "$d/results.json" "len(d['records'])")" -eq 6 ]
}
stop INT 130
stop TERM 143

# A configuration that hangs (timeout 60 s) is stopped at once.
d=$T/run-hang
start --suite "$SUITES/signals.ini" --out "$d" --set testload.fault=hang \
    --set testload.fault_at=setup >hang.out 2>hang.err
started "$d"
kill -s TERM "$pid"
t0=$(date +%s)
wait "$pid"
rc=$?
took=$(($(date +%s) - t0))
ok "hang: exit status 143 (got $rc)" [ "$rc" -eq 143 ]
ok "hang: stopped within 30 s, not after the 60 s timeout ($took s)" [ "$took" -lt 30 ]
ok "hang: no process of the run left" none_left "$d"
ok "hang: nothing journaled for the stopped configuration" [ ! -s "$d/journal.jsonl" ]

# A second signal right after the first: dlbench dies of it at once (no
# orderly stop), still leaving no process of the run behind.
d=$T/run-twice
start --suite "$SUITES/signals.ini" --out "$d" --set testload.fault=hang \
    --set testload.fault_at=setup >twice.out 2>twice.err
started "$d"
kill -s INT "$pid"
kill -s INT "$pid"
wait "$pid"
rc=$?
ok "twice: killed by the second SIGINT (status $rc)" [ "$rc" -eq 130 ]
sleep 0.5
ok "twice: no process of the run left" none_left "$d"
finish
