#!/bin/sh
# A workload of twice the work measures twice the time, on testload's
# synthetic clock (clock = synthetic: a step counts as work x 1 ns, so the
# figures are exact on any machine under any load): the medians are
# exactly 400 and 800 us, the ratio exactly 2, and the record says which
# clock measured it. A clock that costs nothing to read needs no steps
# batched against its overhead. The same check on the machine's clock,
# where the ratio depends on the machine and its load, is
# tests/bench/scaling.sh (run on a quiet machine).
. "${top_srcdir:-.}/tests/integration/lib.sh"

"$DLBENCH" --suite "$SUITES/scaling.ini" --set testload.clock=synthetic --out run \
    >/dev/null 2>err.txt
ok "run succeeds" [ $? -eq 0 ]
ratio=$(json run/results.json "repr(d['records'][1]['stats']['median'] / d['records'][0]['stats']['median'])")
echo "time ratio for twice the work: $ratio" >&2
ok "ratio $ratio is 2 to rounding" python3 -c "import sys; sys.exit(0 if abs(float(sys.argv[1]) - 2) < 1e-9 else 1)" "$ratio"
ok "medians are work x 1 ns" python3 -c "
import json; d=json.load(open('run/results.json'))
for r in d['records']:
    want = r['config']['testload.work'] * 1e-9
    assert abs(r['stats']['median'] / want - 1) < 1e-9, (r['id'], r['stats']['median'], want)"
ok "measured on the workload's clock" python3 -c "
import json; d=json.load(open('run/results.json'))
assert [r['measure']['clock'] for r in d['records']] == ['workload', 'workload']"
ok "equal steps: settled, converged at min_samples (20)" python3 -c "
import json; d=json.load(open('run/results.json'))
for r in d['records']:
    m=r['measure']; assert m['settled'] and m['converged'] and r['stats']['n'] == 20, m"
ok "warm-up of at least the suite's 0.2 s, on that clock" python3 -c "
import json; d=json.load(open('run/results.json'))
for r in d['records']:
    m=r['measure']; assert 0.2 <= m['warmup_s'] < 0.2 + 2 * r['stats']['median'], m"
ok "a free clock: overhead 0, one step per sample" python3 -c "
import json; d=json.load(open('run/results.json'))
for r in d['records']:
    m=r['measure']; assert m['timer_overhead_s'] == 0 and m['steps_per_sample'] == 1, m"
ok "the work was done: checksum = steps x work" python3 -c "
import json; d=json.load(open('run/results.json'))
for r in d['records']:
    m=r['measure']; steps = m['warmup_steps'] + r['stats']['n'] * m['steps_per_sample']
    assert r['metrics']['testload.checksum']['value'] == steps * r['config']['testload.work'], r['id']"

# The machine's clock: a figure of its own, with an overhead measured.
"$DLBENCH" --suite "$SUITES/scaling.ini" --set testload.work=400000 --set time_cap=0.2s \
    --out real >/dev/null 2>real.err
ok "real clock: run succeeds" [ $? -eq 0 ]
ok "real clock: said in the record" [ "$(json real/results.json "d['records'][0]['measure']['clock']")" = monotonic ]
ok "real clock: samples and an overhead measured" python3 -c "
import json; d=json.load(open('real/results.json'))
r=d['records'][0]; m=r['measure']
assert r['stats']['n'] >= 2 and r['stats']['median'] > 0 and m['timer_overhead_s'] >= 0, m"
finish
