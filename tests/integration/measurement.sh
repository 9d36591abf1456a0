#!/bin/sh
# What each configuration's process fixes before it measures, and what it
# records of the machine: the malloc policy and its effect on page faults
# (counted, so the same on any machine under any load), the OpenMP wait
# policy and the warning when threads outnumber the allowed CPUs, the
# counters over the sampling, a doubtful figure flagged; merge
# --as-repetitions; compare's resolution.
. "${top_srcdir:-.}/tests/integration/lib.sh"

# LeNet training at batch 256 on the cpu backend: its activations are
# allocated anew every step (conv1's output alone is 4.8 MB).
lenet() {
    "$DLBENCH" run baseline --set batch=256 --set train_steps=0 --set warmup=0.1s \
        --set time_cap=0.3s --set min_samples=5 "$@"
}
lenet --set malloc=steady --out steady >/dev/null 2>steady.err
ok "malloc=steady run exits 0" [ $? -eq 0 ]
lenet --set malloc=fresh --out fresh >/dev/null 2>fresh.err
ok "malloc=fresh run exits 0" [ $? -eq 0 ]
# Under a sanitizer (or a preloaded allocator) mallopt refuses; the record
# says so and the run goes on. With glibc's malloc the thresholds hold.
applied=$(json steady/results.json "d['records'][0]['controls']['malloc']['applied']")
if [ "$applied" = True ]; then
    ok "the record says which policy, with its thresholds" [ "$(json steady/results.json \
        "[(c['policy'], c['mmap_threshold'], c['trim_threshold']) for c in [d['records'][0]['controls']['malloc']]]")" = \
        "[('steady', 33554432, 2147483647)]" ]
else
    ok "a refused policy is recorded with the reason" grep -q "not glibc's" steady/journal.jsonl
fi
ok "the context says it too" [ "$(json fresh/results.json "d['context']['measurement']['malloc']")" = fresh ]
# Page faults are counted, not timed: fresh pages every step against none.
[ "$applied" = True ] &&
ok "malloc=fresh faults its activations in at every step, steady does not" python3 -c "
import json
f = json.load(open('fresh/results.json'))['records'][0]['system']['minor_faults']
s = json.load(open('steady/results.json'))['records'][0]['system']['minor_faults']
print('minor faults per step: fresh %.0f, steady %.1f' % (f, s))
assert f > 1000 and s < f / 20, (f, s)"
ok "the counters over the sampling" python3 -c "
import json
r = json.load(open('steady/results.json'))['records'][0]
s = r['system']
for k in ('minor_faults', 'major_faults', 'voluntary_switches', 'involuntary_switches',
          'involuntary_per_s', 'cpu_per_wall', 'wall_s'):
    assert s[k] >= 0, k
assert s['steal_share'] is None or 0 <= s['steal_share'] <= 1
# the sampling alone: its wall time is the samples' time, not the warm-up's
assert abs(s['wall_s'] - r['measure']['measure_s']) < 0.05, (s['wall_s'], r['measure'])
assert r['controls']['pinning'] == 'one thread per allowed CPU'"
ok "the report names the measurement controls" grep -q "measurement: malloc steady" steady/report.md

# A policy that is not one: bad input, before anything runs.
lenet --set malloc=lots --out bad >/dev/null 2>bad.err
ok "malloc=lots: exit 2" [ $? -eq 2 ]
ok "malloc=lots: the message names the value and the choices" grep -q "lots.*steady" bad.err
ok "malloc=lots: nothing written" [ ! -e bad/results.json ]

# More threads than allowed CPUs: warned, and run with the passive policy.
over=$(( $(python3 -c "import os; print(len(os.sched_getaffinity(0)))") + 1 ))
"$DLBENCH" run "$SUITES/ok.ini" --set threads="$over" --out over >/dev/null 2>over.err
ok "oversubscribed run exits 0" [ $? -eq 0 ]
ok "oversubscription is warned with its cost" grep -q "threads=$over on .* allowed CPUs.*OMP_WAIT_POLICY=passive" over.err
ok "oversubscribed processes ran with the passive wait policy" [ "$(json over/results.json \
    "sorted(set((r['controls']['oversubscribed'], r['controls']['omp_wait_policy']) for r in d['records']))")" = \
    "[(True, 'passive')]" ]
"$DLBENCH" run "$SUITES/ok.ini" --out fit >/dev/null 2>fit.err
ok "threads within the CPUs: no warning, the default policy" sh -c \
    "! grep -q oversubscri fit.err && [ \"\$(grep -c omp_wait_policy\\\":\\\"default fit/journal.jsonl)\" -eq 3 ]"

# A doubtful figure is flagged in the report and on the console: a record
# whose process was preempted often (a made-up journal entry, as a busy
# machine would write it), merged into a run directory.
python3 - <<'PY'
import json
lines = [json.loads(l) for l in open('fit/journal.jsonl')]
lines[0]['system']['involuntary_per_s'] = 900.0
lines[0]['system']['doubtful'] = 'its threads were preempted 900 times a second: something else was running'
with open('fit/journal.jsonl', 'w') as f:
    for r in lines:
        f.write(json.dumps(r) + '\n')
d = json.load(open('fit/results.json'))
d['records'][0]['system'] = lines[0]['system']
json.dump(d, open('fit/results.json', 'w'))
PY
"$DLBENCH" merge fit --out flagged >flagged.out 2>flagged.err
ok "the report flags the doubtful configuration" grep -q "doubtful: testload.work=10000.*preempted 900 times" flagged/report.md

# Runs of one suite merged as repetitions: process-level statistics.
"$DLBENCH" run "$SUITES/ok.ini" --out fit2 >/dev/null 2>fit2.err
"$DLBENCH" merge --as-repetitions fit fit2 --out reps >/dev/null 2>reps.err
ok "merge --as-repetitions exits 0" [ $? -eq 0 ]
ok "each configuration has both runs as its processes" [ "$(json reps/results.json \
    "[len(r['repetitions']) for r in d['records']]")" = "[2, 2, 2]" ]
ok "the merged median is the processes' geometric mean" python3 -c "
import json, math
for r in json.load(open('reps/results.json'))['records']:
    m = [p['median'] for p in r['repetitions']]
    g = math.exp(sum(map(math.log, m)) / len(m))
    assert abs(r['stats']['median'] / g - 1) < 1e-9, (r['stats']['median'], g)"
ok "the merged run resumes as 2 repetitions" grep -q '"repetitions=2"' reps/invocation.json
"$DLBENCH" merge --as-repetitions fit --out one >/dev/null 2>one.err
ok "one run is no repetition: exit 2" [ $? -eq 2 ]
ok "one run: says to give two" grep -q "give two run directories" one.err
"$DLBENCH" merge --as-repetitions reps reps --out twice >/dev/null 2>twice.err
ok "a run with repetitions already: exit 2" [ $? -eq 2 ]
ok "a run with repetitions already: named" grep -q "reps: configuration .* ran with repetitions" twice.err

# compare says how small a change it could have seen.
"$DLBENCH" compare reps reps --format json >cmp.json 2>cmp.err
ok "compare records each row's resolution" python3 -c "
import json
c = json.load(open('cmp.json'))
assert all(r['resolution'] >= c['threshold'] for r in c['configs']), c['configs']
assert c['resolution']['max'] >= c['resolution']['median'] >= c['threshold']"
"$DLBENCH" compare reps reps >cmp.txt 2>&1
ok "compare's table says what 'same' could not see" grep -q "same (blind below" cmp.txt
ok "compare's summary states the resolution" grep -q "^resolution: these runs could detect a change of" cmp.txt
for d in steady fresh fit flagged reps; do
    ok "$d: records read and written again are the same" round_trips $d
done
finish
