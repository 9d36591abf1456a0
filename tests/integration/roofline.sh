#!/bin/sh
# The share of peak is taken against a roofline of the same sitting: the
# run records which probe it used, when it was taken and why it was chosen
# (results.json's context.peak and DIR/peak.json), every record names that
# probe, a cached probe older than peak_max_age is measured again, one that
# a quick check finds far from the machine's speed too, and --resume keeps
# the run's own. The machine's figures never decide a check here: the
# planted cache entries are absurd on purpose (1,000,000 GFLOP/s). A
# record whose convolutions ran on Winograd kernels says its figures are
# effective ones (below).
. "${top_srcdir:-.}/tests/integration/lib.sh"

export DLBENCH_CACHE_DIR="$T/cache"
suite="$SUITES/roofline.ini"

"$DLBENCH" --suite "$suite" --out a >a.out 2>a.err
ok "a run with no cached probe exits 0" [ $? -eq 0 ]
ok "it probed for the run, and says why" python3 -c "
import json
p = json.load(open('a/peak.json'))
assert p['source'] == 'probe' and 'no cached probe' in p['why'], p
assert p['age_s'] == 0 and p['check_gflops'] is None, p
c = json.load(open('a/results.json'))['context']['peak']
assert c == p, (c, p)"
ok "each record names the probe its shares are against" python3 -c "
import json
d = json.load(open('a/results.json'))
at = d['context']['peak']['figures']['measured_at']
rs = [r for r in d['records'] if r['status'] == 'ok']
assert len(rs) == 2, rs
for r in rs:
    assert r['measure']['peak_measured_at'] == at, r['measure']
    assert r['metrics']['peak_fp32_share']['value'] > 0, r['metrics']"
ok "the console says which roofline" grep -q "^dlbench: roofline: fp32 .* GFLOP/s (.* threads), probed for this run: no cached probe" a.err

# plant FIGURES as this CPU's cached probe, AGE seconds old, fp32 FP32
plant() {
    python3 - "$1" "$2" <<'PY'
import json, os, sys, time
age, fp32 = float(sys.argv[1]), float(sys.argv[2])
f = json.load(open('a/peak.json'))['figures']
f['measured_at'] = int(time.time() - age)
f['fp32']['gflops'] = fp32
f['fp32']['gflops_1t'] = fp32 / f['threads']
os.makedirs(os.environ['DLBENCH_CACHE_DIR'], exist_ok=True)
doc = {'probe_version': f['probe_version'],
       'entries': {f['cpu_model']: {str(f['threads']): f}}}
json.dump(doc, open(os.path.join(os.environ['DLBENCH_CACHE_DIR'], 'peak.json'), 'w'))
PY
}

plant 172800 1000000
"$DLBENCH" --suite "$suite" --out stale >stale.out 2>stale.err
ok "a run over a two-day-old probe exits 0" [ $? -eq 0 ]
ok "it probed again, saying the cached one was too old" python3 -c "
import json
p = json.load(open('stale/peak.json'))
assert p['source'] == 'probe' and '48.0 h old' in p['why'] and 'peak_max_age' in p['why'], p
assert p['figures']['fp32']['gflops'] < 1000000, p"

plant 60 1000000
"$DLBENCH" --suite "$suite" --out kept --set peak_tolerance=1 >kept.out 2>kept.err
ok "a young probe within the tolerance is kept" python3 -c "
import json
p = json.load(open('kept/peak.json'))
assert p['source'] == 'cache' and p['figures']['fp32']['gflops'] == 1000000, p
assert p['check_gflops'] > 0 and 'within peak_tolerance 100%' in p['why'], p
assert 55 <= p['age_s'] <= 3600, p
d = json.load(open('kept/results.json'))
for r in d['records']:
    assert r['measure']['peak_measured_at'] == p['figures']['measured_at'], r
    assert r['metrics']['peak_fp32_share']['value'] < 1, r['metrics']"

plant 60 1000000
"$DLBENCH" --suite "$suite" --out moved >moved.out 2>moved.err
ok "a young probe the quick check disagrees with is measured again" python3 -c "
import json
p = json.load(open('moved/peak.json'))
w = p['why']
assert 'quick check read' in w and 'against the cached probe' in w, p
# a busy machine's re-probe looks contended and leaves the cache as it was
assert ('probed for this run' in w and p['source'] == 'probe') or \
       ('contended' in w and p['source'] == 'cache'), p"

# --resume: the run's own roofline, whatever the cache says by then
plant 60 1000000
"$DLBENCH" --suite "$suite" --out res --set peak_tolerance=1 --time-limit 0.000001 >res1.out 2>res1.err
cp res/peak.json res-peak.json
plant 172800 5
"$DLBENCH" --resume res >res2.out 2>res2.err
ok "the resumed run exits 0" [ $? -eq 0 ]
ok "--resume keeps the run's peak.json" cmp -s res/peak.json res-peak.json
ok "--resume probes nothing" sh -c '! grep -q "roofline: .*probed" res2.err'
ok "every record of the resumed run names the run's probe" python3 -c "
import json
p = json.load(open('res/peak.json'))
d = json.load(open('res/results.json'))
assert d['context']['peak'] == p
rs = [r for r in d['records'] if r['status'] == 'ok']
assert len(rs) == 2, rs
for r in rs:
    assert r['measure']['peak_measured_at'] == p['figures']['measured_at'], r"
ok "a: records read and written again are the same" round_trips a

# Winograd kernels multiply less than the direct convolution whose FLOPs
# a step counts: a record whose convolutions ran on them names the
# algorithm (measure.fewer_flops), exactly when its profile lists such a
# kernel, and the console stars its GFLOP/s and share with a note under
# the table. vgg-small's 3x3 layers (32 to 64 channels) are what oneDNN
# 2.x runs on them on AVX-512; 3.x has none on CPUs, and there the field
# must be absent.
if "$DLBENCH" list 2>/dev/null | grep -q '^  cpu  *available'; then
    printf '%s\n' '[suite]' 'name = winograd' 'backend = cpu' 'model = vgg-small' \
        'dataset = synthetic' 'batch = 32' 'measure_only = on' 'profile = ops' \
        'warmup = 0.01s' 'time_cap = 0.1s' 'min_samples = 3' '' '[sweep]' \
        'cpu.winograd = on, off' >wino.ini
    "$DLBENCH" --suite wino.ini --out wino >wino.out 2>&1
    ok "winograd: exit 0" [ $? -eq 0 ]
    ok "winograd: fewer_flops names the algorithm where the profile shows it ran, only there" python3 - <<'PY'
import json
d = json.load(open('wino/results.json'))
rs = {r['id']: r for r in d['records']}
assert sorted(rs) == ['cpu.winograd=off', 'cpu.winograd=on'], list(rs)
for i, r in rs.items():
    assert r['status'] == 'ok', r
    ran = any(o['kernel'] == 'onednn_winograd' for o in r['profile']['ops'])
    assert r['measure'].get('fewer_flops') == ('winograd' if ran else None), (i, ran, r['measure'])
    assert r['metrics']['gflops']['value'] > 0, r['metrics']
assert 'fewer_flops' not in rs['cpu.winograd=off']['measure'], rs['cpu.winograd=off']['measure']
PY
    ok "winograd: the console stars the effective figures and says why, only then" python3 - <<'PY'
import json
d = json.load(open('wino/results.json'))
out = open('wino.out').read().splitlines()
note = [l for l in out if l.startswith('* effective figures:')]
starred = False
for r in d['records']:
    row = [l for l in out if l.startswith('%d  %s ' % (r['index'], r['id']))]
    assert len(row) == 1, (r['id'], row)
    cells = row[0].split()
    fast = 'fewer_flops' in r['measure']
    starred |= fast
    assert cells[-1].endswith('*') == fast and cells[-2].endswith('*') == fast, (row, fast)
assert len(note) == starred, note
if note:
    assert 'winograd kernels' in note[0] and 'pass 100%' in note[0], note
PY
    ok "winograd: records read and written again are the same" round_trips wino
fi
finish
