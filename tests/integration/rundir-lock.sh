#!/bin/sh
# Two runs given the same --out: the second stops at once (exit 2) naming
# the process that holds the directory, and writes nothing there; the
# lock goes with its holder, so the directory is usable after it. Then two
# runs started together: one runs, the other is refused with a message
# (not a half-written suite.ini). Issue: "cannot write same/suite.ini: No
# such file or directory" from the second of two runs with one --out.
. "${top_srcdir:-.}/tests/integration/lib.sh"

command -v flock >/dev/null 2>&1 || { echo "no flock(1): skipped"; exit 77; }

# A holder of the lock that is not dlbench, so that it holds it as long as
# this test wants: flock(1) on the same file, with a pid written there.
mkdir held
echo 4242 >held/.lock
flock -o held/.lock sleep 60 &
holder=$!
i=0
while flock -n held/.lock true 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
"$DLBENCH" --suite "$SUITES/ok.ini" --out held >out 2>err
ok "locked: exit status 2" [ $? -eq 2 ]
ok "... naming the process that holds it" grep -q "held is in use by dlbench process 4242" err
ok "... and what to do" grep -q "choose another --out" err
ok "... writing nothing there" [ ! -e held/suite.ini ] && [ ! -e held/journal.jsonl ]
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
"$DLBENCH" --suite "$SUITES/ok.ini" --out held >out 2>err
ok "unlocked: the same directory runs" [ $? -eq 0 ]
ok "... to the end" [ -s held/results.json ]
ok "... recording its pid in the lock" [ "$(cat held/.lock)" -gt 0 ]

# --resume locks too: a resumed run beside a holder is refused.
flock -o held/.lock sleep 60 &
holder=$!
i=0
while flock -n held/.lock true 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
cp held/results.json before.json
"$DLBENCH" --resume held >out 2>err
ok "--resume beside a holder: exit status 2" [ $? -eq 2 ]
ok "... saying it is in use" grep -q "is in use by dlbench process" err
ok "... results untouched" cmp -s before.json held/results.json
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

# Two started together: one succeeds, the other is refused with a reason.
"$DLBENCH" --suite "$SUITES/ok.ini" --out same >out1 2>err1 &
p1=$!
"$DLBENCH" --suite "$SUITES/ok.ini" --out same >out2 2>err2 &
p2=$!
wait $p1; s1=$?
wait $p2; s2=$?
ok "together: one of the two runs ($s1 $s2)" sh -c "[ $((s1 + s2)) -eq 2 ] && [ $((s1 * s2)) -eq 0 ]"
ok "... the other says why" grep -Eq "is in use by dlbench process|already exists and is not empty" err1 err2
ok "... no write error" sh -c "! grep -q 'cannot write' err1 err2"
ok "... the results whole" [ -s same/results.json ]
finish
