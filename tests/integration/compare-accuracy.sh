#!/bin/sh
# dlbench compare's accuracy, on a real inference run (LeNet, --quick, one
# seed) and on runs crafted from it: every test image predicted alike is
# "same"; one seed that moved is "not judged", exit 0 (a rebuilt training
# moves by its own noise); over three seeds, 1% of the test images lost at
# every seed (-1 point) is "lower" and fails the gate (exit 1), in the
# table, the markdown and the JSON; 0.2% lost (-0.2 points, inside the
# 0.5-point threshold) is "same".
. "${top_srcdir:-.}/tests/integration/lib.sh"

"$DLBENCH" --suite "$top_srcdir/suites/infer.ini" --quick --set batch=64 \
    --out base >/dev/null 2>run.err
ok "the base run succeeds ($(tail -1 run.err))" [ -f base/results.json ]
ok "it scored its accuracy with the marks" python3 -c "
import json
r = json.load(open('base/results.json'))['records'][0]
assert r['status'] == 'ok' and 'test_correct' in r, r.get('reason')"

# craft DST SEEDS LOST: base's record with SEEDS seeds (each a copy of its
# one seed's marks), LOST in 10,000 of the images it got right lost at
# every seed.
craft() {
    mkdir -p "$1"
    python3 - base/results.json "$1/results.json" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
seeds = int(sys.argv[3])
for r in d['records']:
    n = int(r['metrics']['test_images']['value'])
    lost = round(n * int(sys.argv[4]) / 10000)
    x = int.from_bytes(bytes.fromhex(r['test_correct']), 'little')
    gone = 0
    for i in range(n):
        if gone < lost and x >> i & 1:
            x &= ~(1 << i)
            gone += 1
    acc = 100 * bin(x).count('1') / n
    marks = x.to_bytes((n + 7) // 8, 'little').hex()
    if seeds > 1:
        r['seeds'] = [{'seed': 42 + k, 'accuracy': acc, 'test_correct': marks}
                      for k in range(seeds)]
        del r['test_correct']
    else:
        r['test_correct'] = marks
    r['metrics']['accuracy']['value'] = acc
json.dump(d, open(sys.argv[2], 'w'), indent=2)
PY
}
craft moved 1 30
craft seeds3 3 0
craft lower3 3 100
craft little3 3 20

"$DLBENCH" compare base base >same.out 2>&1
ok "the same run: exit 0" [ $? -eq 0 ]
ok "the same run: accuracy same, every prediction alike" \
    grep -q "accuracy: 0 lower, 0 higher, 1 same of 1 judged" same.out

"$DLBENCH" compare base moved >moved.out 2>&1
ok "one seed moved: exit 0" [ $? -eq 0 ]
ok "one seed moved: not judged" grep -q "  not judged$" moved.out

"$DLBENCH" compare seeds3 lower3 >lower.out 2>&1
ok "1% of the images lost over 3 seeds: exit 1" [ $? -eq 1 ]
ok "1% lost over 3 seeds: lower" grep -q "  lower$" lower.out
ok "and the timing still the same" grep -q "0 slower, 0 faster, 1 same" lower.out
"$DLBENCH" compare --format markdown seeds3 lower3 >lower.md 2>&1
ok "markdown: the lower row in bold" grep -q "| \*\*lower\*\* |$" lower.md
"$DLBENCH" compare --format json seeds3 lower3 >lower.json 2>/dev/null
ok "json: exit 1 too" [ $? -eq 1 ]
ok "json: the change, its paired interval and the verdict" python3 -c "
import json, math
d = json.load(open('lower.json'))
a = d['configs'][0]['accuracy']
assert d['accuracy']['lower'] == 1 and a['verdict'] == 'lower', d
assert a['seeds'] == 3 and a['test_images'] == 'paired', a
n = json.load(open('base/results.json'))['records'][0]['metrics']['test_images']['value']
k = round(n / 100)
assert abs(a['change'] + 100 * k / n) < 1e-9, a
# k images at -1, the rest 0, the same at each seed: the t interval is 0
p = k / n
half = 100 * 1.96 * math.sqrt((k - n * p * p) / (n - 1) / n)
assert abs(a['ci'] - half) < 1e-9, (a, half)"

"$DLBENCH" compare seeds3 little3 >little.out 2>&1
ok "0.2% lost: inside the threshold, exit 0" [ $? -eq 0 ]
ok "0.2% lost: same" grep -q "accuracy: 0 lower, 0 higher, 1 same of 1 judged" little.out
finish
