#!/bin/sh
# SIGKILL mid-run, then --resume: every configuration present exactly once,
# no half-written file. Several trials at different moments.
. "${top_srcdir:-.}/tests/integration/lib.sh"

for delay in 0.9 1.7 2.6; do
    d=run-$delay
    "$DLBENCH" --suite "$SUITES/resume.ini" --out "$d" >/dev/null 2>&1 &
    pid=$!
    sleep "$delay"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    n_before=$(cat "$d/journal.jsonl" 2>/dev/null | wc -l)
    ok "no temporary file left ($delay s)" sh -c "! ls -a $d | grep -q '\.tmp'"
    "$DLBENCH" --resume "$d" >/dev/null 2>"$d.err"
    ok "resume exits 0 ($delay s)" [ $? -eq 0 ]
    ok "journal has each configuration once ($delay s, $n_before before)" python3 -c "
import json,sys
idx=[json.loads(l)['index'] for l in open('$d/journal.jsonl')]
sys.exit(0 if sorted(idx)==list(range(6)) else 1)"
    ok "results.json has all six ($delay s)" [ "$(json "$d/results.json" "len(d['records'])")" -eq 6 ]
done

# A torn last journal line is dropped with a warning and run again.
d=run-0.9
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
