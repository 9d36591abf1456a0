#!/bin/sh
# Two writers at once and a writer killed inside its transaction: two
# `store add` processes of ten runs each, started together, both succeed
# and the store holds all twenty; a writer stopped inside its transaction
# (DLBENCH_TEST_STORE_STALL, a hook for this test: it writes its first
# run, marks a file and waits) keeps a third writer waiting, and when it
# is killed with SIGKILL the store passes SQLite's integrity check, holds
# nothing of the killed transaction, the waiting writer's runs are in, and
# adding the killed writer's runs again adds them whole.
. "${top_srcdir:-.}/tests/integration/lib.sh"

CRAFT="$top_srcdir/tests/integration/craft-nights.py"
rows() {
    python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$1" "$2"
}

"$DLBENCH" --suite "$SUITES/ok.ini" --set testload.clock=synthetic --out base >/dev/null 2>&1
ok "a real run to start from" [ -f base/results.json ]
python3 "$CRAFT" base a 10 --host box-a >/dev/null
python3 "$CRAFT" base b 10 --host box-b >/dev/null
python3 "$CRAFT" base c 10 --host box-c >/dev/null
python3 "$CRAFT" base d 5 --host box-d >/dev/null

# Two at once, on a store neither has made yet.
"$DLBENCH" store add s.db a >a.out 2>a.err &
pa=$!
"$DLBENCH" store add s.db b >b.out 2>b.err &
pb=$!
wait $pa
ra=$?
wait $pb
rb=$?
ok "two writers at once: both exit 0 ($(cat a.err b.err))" [ "$ra$rb" = 00 ]
ok "both writers' runs are in: 20 runs, 60 rows" \
    [ "$(rows s.db 'SELECT COUNT(*) || "/" || (SELECT COUNT(*) FROM results) FROM runs')" = 20/60 ]

# The race at creation again, a few times: both read a new, empty file
# and both switch it to WAL and make the schema (it failed 26 times in 60
# before SQLite's immediate busy answer was retried and the version read in
# one snapshot).
lost=0
for k in 1 2 3 4 5 6 7 8 9 10; do
    "$DLBENCH" store add r$k.db a >/dev/null 2>>race.err &
    pa=$!
    "$DLBENCH" store add r$k.db b >/dev/null 2>>race.err || lost=$((lost + 1))
    wait $pa || lost=$((lost + 1))
    [ "$(rows r$k.db 'SELECT COUNT(*) FROM runs')" = 20 ] || lost=$((lost + 1))
done
ok "ten more races to create a store: every writer succeeds ($(cat race.err))" [ $lost -eq 0 ]

# A writer stopped inside its transaction, then killed.
DLBENCH_TEST_STORE_STALL=$PWD/stalled "$DLBENCH" store add s.db c >c.out 2>c.err &
pc=$!
i=0
while [ ! -e stalled ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
ok "the writer is inside its transaction" [ -e stalled ]
"$DLBENCH" store add s.db d >d.out 2>d.err &
pd=$!
sleep 1
ok "a second writer waits for it meanwhile" kill -0 $pd
kill -KILL $pc
{ wait $pc; } 2>/dev/null
wait $pd
rd=$?
ok "the waiting writer then succeeds ($(cat d.err))" [ "$rd" -eq 0 ]
ok "the store passes SQLite's integrity check" \
    [ "$(rows s.db 'PRAGMA integrity_check')" = ok ]
ok "nothing of the killed transaction is there" \
    [ "$(rows s.db "SELECT COUNT(*) FROM runs WHERE host = 'box-c'")" = 0 ]
ok "the waiting writer's 5 runs are" \
    [ "$(rows s.db "SELECT COUNT(*) FROM runs WHERE host = 'box-d'")" = 5 ]
"$DLBENCH" store add s.db c >c2.out 2>&1
ok "adding the killed writer's runs again adds them whole ($(cat c2.out))" \
    grep -q "10 runs added (30 configuration rows), 0 known" c2.out
ok "35 runs, 105 rows in all" \
    [ "$(rows s.db 'SELECT COUNT(*) || "/" || (SELECT COUNT(*) FROM results) FROM runs')" = 35/105 ]
"$DLBENCH" changes s.db >/dev/null 2>changes.err
ok "the store reads back ($(cat changes.err))" [ $? -le 1 ]

finish
