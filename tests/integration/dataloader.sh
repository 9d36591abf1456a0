#!/bin/sh
# The dataloader suite in --quick form: every configuration runs, the
# plugin records its figures (the stall share among them), the training
# sees the baseline's samples (its last loss is the baseline's, bit for bit,
# with the loader inside the step and with 2 workers), the mmap source
# writes its cache once and reuses it, a bad setting is refused at
# suite load with the file and line, and pinned = on is refused (backend
# fixed) or skipped (backend swept) on backends without a host-to-device
# copy.
. "${top_srcdir:-.}/tests/integration/lib.sh"

DLBENCH_CACHE_DIR="$T/cache"
export DLBENCH_CACHE_DIR
SUITE="$top_srcdir/suites/dataloader.ini"

"$DLBENCH" --suite "$SUITE" --quick --out run >out.txt 2>err.txt
ok "quick suite exits 0 ($(tail -n 1 err.txt))" [ $? -eq 0 ]
ok "three configurations, all ok" python3 -c "
import json; d=json.load(open('run/results.json'))
assert len(d['records']) == 3, len(d['records'])
assert all(r['status'] == 'ok' for r in d['records'])"
ok "figures recorded with the plugin on" python3 -c "
import json; d=json.load(open('run/results.json'))
on = [r for r in d['records'] if r['config']['dataloader.enable']]
assert len(on) == 2
for r in on:
    m = r['metrics']
    assert 0 <= m['dataloader.stall_share']['value'] <= 100, m
    assert m['dataloader.stall_share']['unit'] == '%'
    assert m['dataloader.loader_images_per_s']['value'] > 0
    assert m['dataloader.queue_depth_mean']['value'] >= 0
    assert m['dataloader.batches']['value'] >= 5
    assert 'dataloader.queue_depth_0' in m"
ok "same samples: train_loss_last equal to the baseline's" python3 -c "
import json; d=json.load(open('run/results.json'))
losses = {r['id']: r['metrics']['train_loss_last']['value'] for r in d['records']}
assert len(set(losses.values())) == 1, losses"
ok "stall share in the CSV" grep -q "dataloader.stall_share" run/results.csv

# source = mmap: the cache is written by the first run, mapped by the next.
for i in 1 2; do
    "$DLBENCH" --suite "$SUITE" --quick --out "mmap$i" --set dataloader.enable=on \
        --set dataloader.workers=2 --set dataloader.source=mmap >/dev/null 2>&1
    ok "mmap run $i exits 0" [ $? -eq 0 ]
done
ok "one cache file" [ "$(ls "$T/cache/data" | grep -c '^u8-.*\.bin$')" -eq 1 ]
ok "no temporary files left" [ "$(ls "$T/cache/data" | wc -l)" -eq 1 ]
ok "written once, then reused" python3 -c "
import json
w = [json.load(open('mmap%d/results.json' % i))['records'][0]['metrics']
     ['dataloader.cache_written']['value'] for i in (1, 2)]
assert w == [1, 0], w"
ok "mmap: the same samples" python3 -c "
import json
a = json.load(open('run/results.json'))['records'][0]['metrics']['train_loss_last']['value']
b = json.load(open('mmap2/results.json'))['records'][0]['metrics']['train_loss_last']['value']
assert a == b, (a, b)"

# Bad settings are refused when the suite loads, naming file and line.
cat >bad.ini <<'EOF'
[suite]
batch = 64
[dataloader]
workers = -1
EOF
"$DLBENCH" --suite ./bad.ini --out run-bad >/dev/null 2>bad.err
ok "negative workers: exit 2" [ $? -eq 2 ]
ok "names bad.ini:4 ($(cat bad.err))" grep -q "bad.ini:4" bad.err
ok "names the key" grep -q "workers" bad.err
ok "no run directory" [ ! -e run-bad ]
"$DLBENCH" --suite "$SUITE" --quick --set dataloader.prefetch=0 >/dev/null 2>set.err
ok "prefetch 0 via --set: exit 2" [ $? -eq 2 ]

"$DLBENCH" plugin-help dataloader >help.txt 2>&1
ok "help says pinned uploads on a copy stream" grep -q "copy stream" help.txt

# pinned = on needs a backend with a host-to-device copy (cuda): with the
# backend fixed to cpu the suite is refused at the pinned line; with the
# backend swept each configuration on ref or cpu is skipped with the reason.
cat >pinned-fixed.ini <<'EOF2'
[suite]
batch = 64
backend = cpu

[dataloader]
pinned = on
EOF2
"$DLBENCH" --suite ./pinned-fixed.ini --out run-pf >/dev/null 2>pf.err
ok "pinned on a fixed cpu backend: exit 2" [ $? -eq 2 ]
ok "names pinned-fixed.ini:6 and the backend ($(cat pf.err))" \
    grep -q "pinned-fixed.ini:6: dataloader.pinned = on applies to backend = cuda only.*backend = cpu (line 3)" pf.err
ok "no run directory" [ ! -e run-pf ]
cat >pinned-swept.ini <<'EOF2'
[suite]
model = lenet
batch = 64
train_steps = 0
warmup = 0.1s
time_cap = 0.5s

[dataloader]
pinned = on

[sweep]
backend = cpu, ref
EOF2
"$DLBENCH" --suite ./pinned-swept.ini --out run-ps >/dev/null 2>ps.err
ok "pinned with the backend swept: every configuration skipped with the reason" python3 -c "
import json; d=json.load(open('run-ps/results.json'))
rs = d['records']
assert len(rs) == 2, len(rs)
for r in rs:
    assert r['status'] == 'skipped', r['status']
    why = r['reason']
    assert 'pinned = on' in why and r['config']['backend'] in why, why
    assert 'host memory' in why, why"
finish
