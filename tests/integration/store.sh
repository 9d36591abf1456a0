#!/bin/sh
# The results store (dlbench store add/info, run --store) on SQLite: runs
# go in once however often they are added, a folder of runs is every run
# in it, the labels given win over the run's own, bad input adds nothing
# and says which file and what to do (exit 2), a store from a newer
# dlbench and files that are not stores are refused untouched, and a run
# with --store lands in the store when it ends (a wrong store stops it
# before anything runs).
. "${top_srcdir:-.}/tests/integration/lib.sh"

CRAFT="$top_srcdir/tests/integration/craft-nights.py"
# rows DB SQL: one value from the store, through python3's sqlite3.
rows() {
    python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$1" "$2"
}

"$DLBENCH" --suite "$SUITES/ok.ini" --set testload.clock=synthetic --set testload.noise=0.02 \
    --out base >/dev/null 2>base.err
ok "a real run to start from" [ -f base/results.json ]
python3 "$CRAFT" base nights 6 >/dev/null

"$DLBENCH" store add s.db nights/night-000 nights/night-001 >add1.out 2>add1.err
rc=$?
ok "store add: exit 0 ($(cat add1.err))" [ $rc -eq 0 ]
ok "store add: 2 runs, 6 rows ($(cat add1.out))" grep -q "2 runs added (6 configuration rows)" add1.out
"$DLBENCH" store add s.db nights >add2.out 2>&1
ok "a folder of runs: the 4 new ones added, 2 known ($(cat add2.out))" \
    grep -q "4 runs added (12 configuration rows), 2 known already (6 rows)" add2.out
"$DLBENCH" store add s.db nights nights/night-003 >add3.out 2>&1
ok "everything again: nothing added ($(cat add3.out))" grep -q " 0 runs added (0 configuration rows), 7 known" add3.out
ok "one row per run and configuration" [ "$(rows s.db 'SELECT COUNT(*) FROM results')" = 18 ]
ok "the machine is the run's host (craft-nights: ci-1)" \
    [ "$(rows s.db 'SELECT COUNT(DISTINCT machine) FROM runs')" = 1 ]
ok "the commit is the run's" [ "$(rows s.db "SELECT commit_sha FROM runs WHERE run_key LIKE '%night-002'")" = \
    "$(json nights/night-002/results.json "d['context']['dlbench']['git_commit']")" ]
"$DLBENCH" store info s.db --format json >info.json
ok "store info: runs, series, schema version" \
    [ "$(json info.json "(d['runs'], d['series'], d['schema_version'], d['engine'])")" = "(6, 3, 2, 'sqlite')" ]

# Labels given on the command line win.
"$DLBENCH" store add s.db base --machine lab-7 --commit 0123456789abcdef >/dev/null 2>&1
ok "--machine and --commit label the run" \
    [ "$(rows s.db "SELECT machine || ' ' || commit_sha FROM runs WHERE run_key LIKE '%|base'")" = "lab-7 0123456789abcdef" ]

# Bad input: nothing added, the file named, exit 2.
before=$(rows s.db 'SELECT COUNT(*) FROM runs')
mkdir -p trunc && head -c 400 nights/night-001/results.json >trunc/results.json
python3 "$CRAFT" base more 1 --first 10 >/dev/null
"$DLBENCH" store add s.db more/night-010 trunc >/dev/null 2>trunc.err
rc=$?
ok "a truncated results.json: exit 2" [ $rc -eq 2 ]
ok "names it ($(cat trunc.err))" grep -q "trunc/results.json" trunc.err
ok "and nothing of the good run beside it was added" [ "$(rows s.db 'SELECT COUNT(*) FROM runs')" = "$before" ]
mkdir -p interrupted && touch interrupted/journal.jsonl
"$DLBENCH" store add s.db interrupted >/dev/null 2>int.err
rc=$?
ok "an interrupted run: exit 2, --resume named ($(cat int.err))" \
    sh -c "[ $rc -eq 2 ] && grep -q -- '--resume' int.err"
printf 'not a database, just text that is long enough to look like a header....\n' >text.db
cp text.db text.orig
"$DLBENCH" store add text.db more/night-010 >/dev/null 2>text.err
rc=$?
ok "a file that is not a store: exit 2 ($(cat text.err))" \
    sh -c "[ $rc -eq 2 ] && grep -q 'not a dlbench store' text.err"
ok "and it is left as it was" cmp -s text.db text.orig
"$DLBENCH" changes missing.db >/dev/null 2>missing.err
rc=$?
ok "a store that does not exist: exit 2, how to make one ($(cat missing.err))" \
    sh -c "[ $rc -eq 2 ] && grep -q 'store add' missing.err && [ ! -e missing.db ]"
cp s.db newer.db
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE dlb_meta SET value = 9 WHERE key = ?", ("schema_version",)); c.commit()' newer.db
"$DLBENCH" store add newer.db more/night-010 >/dev/null 2>newer.err
rc=$?
ok "a store from a newer dlbench: exit 2 ($(cat newer.err))" \
    sh -c "[ $rc -eq 2 ] && grep -q 'newer than this dlbench' newer.err"
ok "and nothing was added to it" [ "$(rows newer.db 'SELECT COUNT(*) FROM runs')" = "$before" ]
"$DLBENCH" store add s.db >/dev/null 2>usage.err
rc=$?
ok "store add without runs: exit 2" [ $rc -eq 2 ]
"$DLBENCH" store frobnicate s.db >/dev/null 2>&1
rc=$?
ok "an unknown store command: exit 2" [ $rc -eq 2 ]

# run --store: the run lands in the store when it ends.
"$DLBENCH" run "$SUITES/ok.ini" --set testload.clock=synthetic --out r1 --store run.db \
    --machine bench-1 >/dev/null 2>r1.err
rc=$?
ok "run --store: exit 0 ($(tail -1 r1.err))" [ $rc -eq 0 ]
ok "run --store: says what it stored" grep -q "stored in run.db: 3 configuration rows added" r1.err
ok "run --store: the run's 3 rows, on machine bench-1" \
    [ "$(rows run.db "SELECT COUNT(*) FROM results JOIN runs ON runs.id = results.run_id WHERE machine = 'bench-1'")" = 3 ]
"$DLBENCH" run "$SUITES/ok.ini" --out r2 --store text.db >/dev/null 2>r2.err
rc=$?
ok "run --store with a file that is no store: exit 2 before the run" \
    sh -c "[ $rc -eq 2 ] && [ ! -e r2/journal.jsonl ] && grep -q 'not a dlbench store' r2.err"
"$DLBENCH" run "$SUITES/ok.ini" --out r3 --machine x >/dev/null 2>r3.err
rc=$?
ok "--machine without --store: exit 2 ($(cat r3.err))" sh -c "[ $rc -eq 2 ] && grep -q -- '--store' r3.err"

finish
