#!/bin/sh
# Accuracy verdicts that tell training noise from an effect
# (accuracy_seeds): each configuration trains from the same list of seeds,
# and its accuracy change against the baseline is the mean of the paired
# differences with a t interval over them. On testload's fake training
# noise with known means: a planted gain of 3 points is found at 10 seeds,
# a planted loss of 3 breaks the accuracy constraint although it is the
# fastest, a zero difference reads "no measurable effect" in at least 19
# of 20 runs, and one seed calls nothing a gain or a loss unless the suite
# states its noise.
. "${top_srcdir:-.}/tests/integration/lib.sh"

# logged NAME ARGS...: dlbench ARGS with stdout in NAME.out, stderr in
# NAME.err; a failure shows the end of its stderr in the test's log (the
# directory goes with the test). Its exit status is dlbench's.
logged() {
    name=$1
    shift
    "$DLBENCH" "$@" >"$name.out" 2>"$name.err"
    rc=$?
    [ "$rc" -eq 0 ] || { echo "$name: dlbench exited $rc; its stderr ends:" >&2
                         tail -n 20 "$name.err" >&2; }
    return "$rc"
}

suite="$SUITES/accuracy-seeds.ini"
logged ten run "$suite" --out ten
ok "ten seeds: the run exits 0" [ $? -eq 0 ]
ok "ten seeds: the journal holds each configuration's ten trainings" python3 -c "
import json
rs = [json.loads(l) for l in open('ten/journal.jsonl')]
idx = sorted(set(r['index'] for r in rs))
assert len(idx) == 3, idx
for i in idx:
    reps = sorted(r.get('seed_rep', 0) for r in rs if r['index'] == i)
    assert reps == list(range(10)), (i, reps)"
ok "ten seeds: each record keeps every seed's accuracy, the mean its figure" python3 -c "
import json, statistics
for r in json.load(open('ten/results.json'))['records']:
    s = r['seeds']
    assert [x['seed'] for x in s] == list(range(42, 52)), s
    acc = [x['accuracy'] for x in s]
    assert abs(r['metrics']['accuracy']['value'] - statistics.mean(acc)) < 1e-9, r['metrics']
    assert abs(r['metrics']['accuracy_sd']['value'] - statistics.stdev(acc)) < 1e-9"
ok "ten seeds: the planted gain is a gain, the loss a loss, in results.json" python3 -c "
import json
s = json.load(open('ten/results.json'))['selection']
rows = {r['id']: r for v in s['verdicts'] for r in v['workloads']}
g = rows['testload.accuracy=83 testload.work=20000']
l = rows['testload.accuracy=77 testload.work=10000']
assert g['accuracy_effect'] == 'gain' and g['accuracy_seeds'] == 10, g
assert 2 < g['accuracy_change'] < 4 and g['accuracy_ci'] < 2, g
assert l['accuracy_effect'] == 'loss' and l['accuracy_change'] < -2, l
assert l['verdict'] == 'costs' and 'accuracy_drop' in l['why'], l
assert s['winner'] == 'testload.accuracy=83 testload.work=20000' or s['winner'] == 'testload.accuracy=80 testload.work=20000', s['winner']
pc = s['per_config']['testload.accuracy=77 testload.work=10000']
assert pc['accuracy_within'] == 'no' and pc['accuracy_seeds'] == 10, pc"
ok "ten seeds: the console says the gain, over how many seeds" grep -q "accuracy +[23][.][0-9]* +-[01][.][0-9]* points over 10 seeds (gain)" ten.out

# Twenty runs of a zero difference: two settings with the same mean.
zero=0
for s in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    logged "z$s" run "$SUITES/accuracy-zero.ini" --out "z$s" --seed "$((s * 1000))"
    e=$(json "z$s/results.json" "[r['accuracy_effect'] for v in d['selection']['verdicts'] for r in v['workloads']][0]")
    [ "$e" = "no measurable effect" ] && zero=$((zero + 1))
done
echo "zero difference: no measurable effect in $zero of 20 runs" >&2
ok "a zero difference is no measurable effect in at least 19 of 20 runs" [ "$zero" -ge 19 ]

# One seed: the noise is not measured, so no gain and no loss.
logged one run "$suite" --out one --set accuracy_seeds=1
ok "one seed: the run exits 0" [ $? -eq 0 ]
ok "one seed: the journal holds one run per configuration" [ "$(wc -l <one/journal.jsonl)" -eq 3 ]
ok "one seed: results.json calls no change a gain or a loss" python3 -c "
import json
s = json.load(open('one/results.json'))['selection']
for v in s['verdicts']:
    for r in v['workloads']:
        assert r['accuracy_effect'] == 'training noise not measured', r
        assert r['accuracy_seeds'] == 1, r"
ok "one seed: the console says the noise was not measured" grep -q "accuracy +[0-9.]* points (1 seed: training noise not measured)" one.out
logged stated run "$suite" --out stated --set accuracy_seeds=1 --set accuracy_noise=0.5
ok "one seed and a stated noise: the interval is the noise and the test set's, and judges" python3 -c "
import json, math
d = json.load(open('stated/results.json'))
acc = {r['id']: r['metrics']['accuracy']['value'] / 100 for r in d['records']}
rows = {r['id']: r for v in d['selection']['verdicts'] for r in v['workloads']}
g = rows['testload.accuracy=83 testload.work=20000']
p, q = acc['testload.accuracy=83 testload.work=20000'], acc['testload.accuracy=80 testload.work=20000']
binom = 100 * 1.96 * math.sqrt(p * (1 - p) / 10000 + q * (1 - q) / 10000)
half = math.hypot(1.96 * 0.5, binom)
assert abs(g['accuracy_ci'] - half) < 1e-9, (g, half)
want = 'gain' if g['accuracy_change'] - half > 0 else 'loss' if g['accuracy_change'] + half < 0 else 'no measurable effect'
assert g['accuracy_effect'] == want, g"
ok "one seed and a stated noise: the console says so" grep -q "points over 1 seed and the stated noise (" stated.out

# --resume finishes the seeds a stopped run left.
"$DLBENCH" run "$suite" --out res --set accuracy_seeds=3 --time-limit 0.000001 >/dev/null 2>&1
"$DLBENCH" --resume res >res.out 2>res.err
ok "resumed: every configuration has its three seeds" python3 -c "
import json
for r in json.load(open('res/results.json'))['records']:
    assert [x['seed'] for x in r['seeds']] == [42, 43, 44], r.get('seeds')"
ok "ten: records read and written again are the same" round_trips ten
finish
