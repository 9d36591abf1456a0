#!/bin/sh
# repetitions = 3 on testload (tests/integration/suites/repetitions.ini):
# the journal holds one record per process, in passes over the sweep;
# results.json one per configuration, its samples those of its three
# processes, with each process's figures under "repetitions"; the later
# repetitions run measure_only; --time-limit then --resume finishes the
# passes without running one twice; halving with repetitions finds the
# grid's winner; the key cannot be swept.
. "${top_srcdir:-.}/tests/integration/lib.sh"

"$DLBENCH" run "$SUITES/repetitions.ini" --out r >/dev/null 2>r.err
ok "run with repetitions exits 0" [ $? -eq 0 ]
ok "journal: 6 records, in passes, each a random order of both" python3 -c "
import json, sys
j = [json.loads(l) for l in open('r/journal.jsonl')]
assert [x['rep'] for x in j] == [0, 0, 1, 1, 2, 2], j
for rep in range(3):
    p = [x for x in j if x['rep'] == rep]
    assert sorted(x['index'] for x in p) == [0, 1]
    assert [x['pass_position'] for x in p] == [0, 1]
"
# The same seed gives the same orders (so --resume and a rerun agree).
"$DLBENCH" run "$SUITES/repetitions.ini" --out r2 >/dev/null 2>r2.err
ok "the passes' orders come from the seed" [ "$(python3 -c "
import json
print([json.loads(l)['index'] for l in open('r/journal.jsonl')])")" = "$(python3 -c "
import json
print([json.loads(l)['index'] for l in open('r2/journal.jsonl')])")" ]
ok "the context records the interleaving" [ "$(json r/results.json \
    "(d['context']['measurement']['interleave']['passes'], d['context']['measurement']['interleave']['seed'])")" = "(3, 42)" ]
ok "results: one record per configuration, no rep" \
    [ "$(json r/results.json "[('rep' in x, len(x['repetitions'])) for x in d['records']]")" = \
      "[(False, 3), (False, 3)]" ]
ok "results: the samples of the three processes" python3 -c "
import json, sys
j = [json.loads(l) for l in open('r/journal.jsonl')]
for rec in json.load(open('r/results.json'))['records']:
    mine = [x for x in j if x['index'] == rec['index']]
    pooled = sum((x['samples'] for x in sorted(mine, key=lambda x: x['rep'])), [])
    assert rec['samples'] == pooled, rec['id']
    assert rec['stats']['n'] == len(pooled)
    assert [r['n'] for r in rec['repetitions']] == [len(x['samples']) for x in sorted(mine, key=lambda x: x['rep'])]
"
ok "the later repetitions ran measure_only" python3 -c "
import json, sys
on = lambda x: str(x['config'].get('measure_only')).lower() in ('on', 'true', '1')
sys.exit(0 if all(on(x) == (x['rep'] > 0) for x in map(json.loads, open('r/journal.jsonl'))) else 1)"
ok "a log per process" sh -c "[ -e r/logs/config-0-rep-0.log ] && [ -e r/logs/config-1-rep-2.log ]"
ok "the winner is the least work" [ "$(json r/results.json "d['selection']['winner']")" = testload.work=20000 ]

# Stopped part-way, then resumed: the passes finish, none runs twice.
"$DLBENCH" run "$SUITES/repetitions.ini" --time-limit 0.05 --out t >/dev/null 2>t.err
ok "time limit stops the run" [ $? -eq 1 ]
ok "stopped before the last pass" [ "$(wc -l <t/journal.jsonl)" -lt 6 ]
"$DLBENCH" --resume t >/dev/null 2>t2.err
ok "resumed run exits 0" [ $? -eq 0 ]
ok "resumed: each (configuration, rep) once" python3 -c "
import json, sys
k = [(json.loads(l)['index'], json.loads(l)['rep']) for l in open('t/journal.jsonl')]
sys.exit(0 if sorted(k) == [(i, r) for i in (0, 1) for r in (0, 1, 2)] else 1)"
ok "resumed: three repetitions each in the results" \
    [ "$(json t/results.json "[len(x['repetitions']) for x in d['records']]")" = "[3, 3]" ]

# Halving with repetitions (a speed-only screening): every round in
# passes; the grid's winner.
"$DLBENCH" run "$SUITES/halving.ini" --set time_cap=0.16s --set repetitions=2 --out h \
    >/dev/null 2>h.err
ok "halving with repetitions exits 0" [ $? -eq 0 ]
ok "halving: each (configuration, round, rep) once, both reps of each" python3 -c "
import json, sys, collections
k = [(x['index'], x['round'], x['rep']) for x in map(json.loads, open('h/journal.jsonl'))]
c = collections.Counter((i, r) for i, r, _ in k)
sys.exit(0 if len(k) == len(set(k)) and set(c.values()) == {2} else 1)"
ok "halving with repetitions finds the least work" \
    [ "$(json h/results.json "d['selection']['winner']")" = testload.work=80000 ]

printf '[suite]\nworkload = testload\n[sweep]\nrepetitions = 1, 2\n' >swept.ini
"$DLBENCH" run ./swept.ini --out s >/dev/null 2>s.err
ok "repetitions cannot be swept: exit 2" [ $? -eq 2 ]
ok "says so ($(cat s.err))" grep -q "swept.ini:4" s.err
for d in r r2 t h; do
    ok "$d: records read and written again are the same" round_trips $d
done
finish
