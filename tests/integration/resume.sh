#!/bin/sh
# SIGKILL at random moments of a run (and of the resumed run), then
# --resume: every configuration present exactly once, no half-written file.
# The moments come from a seed printed here (RESUME_SEED reruns them).
. "${top_srcdir:-.}/tests/integration/lib.sh"

seed=${RESUME_SEED:-$$}
echo "SIGKILL moments from seed $seed" >&2
# Four moments within the measurements (6 x 0.25 s, from when the run
# directory is set up), and one for each resume.
delays=$(awk -v s="$seed" 'BEGIN { srand(s); for (i = 0; i < 8; i++) printf "%.2f ", 0.3 + 1.4 * rand() }')
set -- $delays

# killed SUITE-OR-RESUME-ARGS...: start dlbench, SIGKILL it after the next delay.
killed() {
    "$DLBENCH" "$@" >/dev/null 2>&1 &
    pid=$!
    sleep "$delay"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}

# killed_measuring DIR SUITE-ARGS...: the same, the delay counted from when
# DIR/invocation.json is written (at most 30 s): the moment lands within
# the measurements however long a loaded machine takes to start dlbench
# (the early kills below are the ones meant for the set-up).
killed_measuring() {
    dir=$1
    shift
    "$DLBENCH" "$@" >/dev/null 2>&1 &
    pid=$!
    i=0
    while [ $i -lt 300 ] && [ ! -e "$dir/invocation.json" ] && kill -0 "$pid" 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    sleep "$delay"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}

# no_half_files DIR: whatever is there is whole (a torn last journal line
# is the one thing a kill may leave, and --resume drops it).
no_half_files() {
    python3 -c "
import json, os, sys
d = sys.argv[1]
for name in ('results.json', 'invocation.json'):
    p = os.path.join(d, name)
    if os.path.exists(p):
        json.load(open(p))
lines = open(os.path.join(d, 'journal.jsonl')).read().split('\n') if os.path.exists(os.path.join(d, 'journal.jsonl')) else []
for l in lines[:-1]:
    json.loads(l)" "$1"
}

for trial in 1 2 3 4; do
    delay=$1
    shift
    d=run-$trial
    killed_measuring "$d" --suite "$SUITES/resume.ini" --out "$d"
    n_before=$(cat "$d/journal.jsonl" 2>/dev/null | wc -l)
    ok "no half-written file (trial $trial, $delay s)" no_half_files "$d"
    # Kill the resumed run too, once it has had time to start.
    delay=$1
    shift
    [ -f "$d/invocation.json" ] && killed --resume "$d"
    ok "no half-written file after the killed resume (trial $trial, $delay s)" \
        no_half_files "$d"
    "$DLBENCH" --resume "$d" >/dev/null 2>"$d.err"
    ok "resume exits 0 (trial $trial)" [ $? -eq 0 ]
    ok "journal has each configuration once (trial $trial, $n_before before)" python3 -c "
import json,sys
idx=[json.loads(l)['index'] for l in open('$d/journal.jsonl')]
sys.exit(0 if sorted(idx)==list(range(6)) else 1)"
    ok "results.json has all six (trial $trial)" [ "$(json "$d/results.json" "len(d['records'])")" -eq 6 ]
    ok "no temporary file left (trial $trial)" sh -c "! ls -a $d | grep -q '\.tmp'"
done

# Kills very early: before, while and just after the run directory is set
# up (its first files appear a few milliseconds in). A kill leaves no
# directory, or one without invocation.json, which --resume refuses (exit
# 2) saying to start the run again, and doing so completes it; or one that
# --resume completes. Never a half-written suite.ini or invocation.json.
# Log-uniform between 1 and 40 ms: the set-up's few milliseconds fall at a
# different moment on each machine.
early=$(awk -v s="$seed" 'BEGIN { srand(s + 1); for (i = 0; i < 8; i++) printf "%.4f ", 0.001 * exp(rand() * log(40)) }')
k=0
absent=0
refused=0
resumed=0
for delay in $early; do
    k=$((k + 1))
    d=early-$k
    killed --suite "$SUITES/resume.ini" --out "$d"
    "$DLBENCH" --resume "$d" >/dev/null 2>"$d.err"
    rc=$?
    if [ ! -d "$d" ]; then
        absent=$((absent + 1))
        ok "early $k ($delay s): no directory: --resume exits 2 (got $rc)" [ "$rc" -eq 2 ]
        ok "early $k: says to start again ($(cat "$d.err"))" \
            grep -q "no such run directory (a run stopped before it created its directory measured nothing: start it again with --suite)" "$d.err"
        "$DLBENCH" --suite "$SUITES/resume.ini" --out "$d" >/dev/null 2>&1
        ok "early $k: the run started again exits 0" [ $? -eq 0 ]
    elif [ ! -f "$d/invocation.json" ]; then
        refused=$((refused + 1))
        ok "early $k ($delay s): set-up cut short: --resume exits 2 (got $rc)" [ "$rc" -eq 2 ]
        ok "early $k: says what to do ($(cat "$d.err"))" \
            grep -q "before any configuration ran: there is nothing to resume; remove $d and start the run again" "$d.err"
        ok "early $k: no record was written" [ ! -s "$d/journal.jsonl" ]
        # Doing as told completes the run.
        rm -r "$d"
        "$DLBENCH" --suite "$SUITES/resume.ini" --out "$d" >/dev/null 2>&1
        ok "early $k: the run started again exits 0" [ $? -eq 0 ]
    else
        resumed=$((resumed + 1))
        ok "early $k ($delay s): suite.ini whole" cmp -s "$SUITES/resume.ini" "$d/suite.ini"
        ok "early $k: --resume exits 0 (got $rc; $(tail -1 "$d.err"))" [ "$rc" -eq 0 ]
    fi
    ok "early $k: results.json has all six" [ "$(json "$d/results.json" "len(d['records'])")" -eq 6 ]
    ok "early $k: no half-written file" no_half_files "$d"
    ok "early $k: no temporary file left" sh -c "! ls -a $d | grep -q '\.tmp'"
done
echo "early kills: $absent before the directory, $refused during its set-up, $resumed after" >&2

# A torn last journal line is dropped with a warning and run again.
d=run-1
head -n 2 "$d/journal.jsonl" >torn.jsonl
printf '{"index": 5, "id": "tes' >>torn.jsonl
cp torn.jsonl "$d/journal.jsonl"
"$DLBENCH" --resume "$d" >/dev/null 2>torn.err
ok "resume after a torn line exits 0" [ $? -eq 0 ]
ok "torn line warned about" grep -q "cut short" torn.err
ok "six records after the torn line" [ "$(wc -l <"$d/journal.jsonl")" -eq 6 ]

# A corrupt line in the middle is an error, and nothing is modified.
cp "$d/journal.jsonl" before.jsonl
sed -i '2s/.*/garbage/' "$d/journal.jsonl"
cp "$d/journal.jsonl" corrupt.jsonl
"$DLBENCH" --resume "$d" >/dev/null 2>corrupt.err
ok "corrupt journal exits 2" [ $? -eq 2 ]
ok "corrupt journal names line 2" grep -q "journal.jsonl:2" corrupt.err
ok "corrupt journal left as it was" cmp -s corrupt.jsonl "$d/journal.jsonl"
finish
