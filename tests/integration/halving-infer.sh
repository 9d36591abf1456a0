#!/bin/sh
# search = halving in mode = infer (tests/integration/suites/screen.ini):
# the first screening round measures speed and evaluates the accuracy
# (screen_accuracy) on a 2,000-image subset of the test set, the later
# screening rounds speed alone; no
# configuration that breaks the accuracy constraint (weights trained for
# one step) runs after the first round, however fast; the final round (and
# any fallback round after it) has every figure, and the winner meets the
# constraint.
. "${top_srcdir:-.}/tests/integration/lib.sh"

"$DLBENCH" run "$SUITES/screen.ini" --out h >h.out 2>h.err
ok "halving in mode = infer exits 0" [ $? -eq 0 ]
ok "round 0 said to judge speed and accuracy" \
    grep -q "search round 0: 16 configurations at .* of the budget, speed and accuracy" h.err
ok "later screening rounds said to judge speed only" \
    grep -q "search round 1: .* of the budget, speed only" h.err

rounds() { # PYTHON-CONDITION on r (a journal record): must hold for all
    python3 - "$1" <<'PY'
import json, sys
recs = [json.loads(l) for l in open("h/journal.jsonl")]
# The final round and any fallback rounds after it run at the full budget.
full = lambda r: r["budget"] == 1
on = lambda r, k: str(r["config"].get(k)).lower() in ("on", "true", "1")
acc = lambda r: "accuracy" in r.get("metrics", {})
one_step = lambda r: r["config"]["train_steps"] == 1
bad = [r["id"] + " round %d" % r["round"] for r in recs if not eval(sys.argv[1])]
if bad:
    print("fails for:", *bad, sep="\n  ")
sys.exit(1 if bad else 0)
PY
}
ok "round 0: measure_only and screen_accuracy, with an accuracy" \
    rounds "r['round'] != 0 or (on(r, 'measure_only') and on(r, 'screen_accuracy') and acc(r))"
ok "later screening rounds: speed only, no accuracy" \
    rounds "r['round'] == 0 or full(r) or (on(r, 'measure_only') and not on(r, 'screen_accuracy') and not acc(r))"
ok "full-budget rounds: full figures" \
    rounds "not full(r) or (not on(r, 'measure_only') and acc(r))"
ok "a final round ran" rounds "r['round'] != max(x['round'] for x in recs) or full(r)"
ok "round 0 scores 2,000 of the 10,000 test images, the full rounds all" \
    rounds "not acc(r) or r['metrics']['test_images']['value'] == (10000 if full(r) else 2000)"
ok "one-step weights broke the constraint in round 0" \
    rounds "r['round'] != 0 or not one_step(r) or r['metrics']['accuracy']['value'] < 40"
ok "no one-step configuration ran after round 0" \
    rounds "r['round'] == 0 or not one_step(r)"
ok "the winner's weights are trained" \
    [ "$(json h/results.json "d['selection']['winner'].split()[-1]")" = train_steps=60 ]

# With repetitions round 0 still runs once per configuration, with the
# accuracy; the later rounds in passes, the second of each speed only.
"$DLBENCH" run "$SUITES/screen.ini" --set repetitions=2 --out hr >/dev/null 2>hr.err
ok "halving in mode = infer with repetitions exits 0" [ $? -eq 0 ]
ok "round 0: one process per configuration, each with the accuracy" python3 -c "
import json, sys
r0 = [r for r in map(json.loads, open('hr/journal.jsonl')) if r['round'] == 0]
on = lambda r: str(r['config'].get('screen_accuracy')).lower() in ('on', 'true', '1')
sys.exit(0 if len(r0) == 16 and all('rep' not in r and on(r) and 'accuracy' in r['metrics']
                                    for r in r0) else 1)"
ok "later rounds: two processes each, the second measure_only" python3 -c "
import json, sys, collections
rs = [r for r in map(json.loads, open('hr/journal.jsonl')) if r['round'] > 0]
on = lambda r, k: str(r['config'].get(k)).lower() in ('on', 'true', '1')
n = collections.Counter((r['index'], r['round']) for r in rs)
sys.exit(0 if rs and set(n.values()) == {2} and
         all(on(r, 'measure_only') for r in rs if r['rep'] == 1) else 1)"
ok "with repetitions the winner's weights are trained" \
    [ "$(json hr/results.json "d['selection']['winner'].split()[-1]")" = train_steps=60 ]
for d in h hr; do
    ok "$d: records read and written again are the same" round_trips $d
done
finish
