#!/bin/sh
# The device a configuration ran on reaches its record ("device") and the
# run's environment ("context.devices", and a line of report.md), from the
# configuration's own process: the parent never opens a GPU. A memory pool
# on the cuda backend sits over device memory: where a GPU is present its
# segments show in the device's memory figures; where none is, a fixed
# arena is skipped with the machine's reason, never "oom".
. "${top_srcdir:-.}/tests/integration/lib.sh"

SRC_SUITES="$top_srcdir/suites"

"$DLBENCH" --quick --suite "$SRC_SUITES/baseline.ini" --backend ref \
    --set train_steps=0 --out run >/dev/null 2>err.txt
rc=$?
ok "ref run succeeds (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || cat err.txt >&2
ok "every record names its device, the context lists it once" python3 -c "
import json
d = json.load(open('run/results.json'))
for r in d['records']:
    dev = r['device']
    assert dev['backend'] == 'ref' and dev['name'], dev
    assert dev['compute_units'] >= 1 and isinstance(dev['libraries'], dict), dev
devs = d['context']['devices']
assert len(devs) == 1 and devs[0] == d['records'][0]['device'], devs
"
ok "the report says the device" grep -q 'device (ref)' run/report.md

"$DLBENCH" list >list.txt 2>&1
gpu=no
grep -Eq '^ +cuda +available' list.txt && gpu=yes
"$DLBENCH" --quick --suite "$SRC_SUITES/mempool.ini" --backend cuda \
    --set mempool.enable=on --set mempool.mode=fixed --set mempool.release=never \
    --set mempool.arena_size=512M --out gpu >/dev/null 2>gpu-err.txt
st=$(json gpu/results.json "d['records'][0]['status']")
if [ $gpu = yes ]; then
    ok "the pool's arena on the GPU runs ($st)" [ "$st" = ok ]
    ok "the device record and memory figures of a GPU configuration" python3 -c "
import json
r = json.load(open('gpu/results.json'))['records'][0]
dev, m = r['device'], r['metrics']
assert dev['backend'] == 'cuda' and dev['arch'] and dev['libraries']['cudnn'], dev
held = m['device_mem_held_peak']['value']
assert held >= m['mempool.reserved_peak']['value'] >= 512 << 20, (held, m)
assert m['device_mem_used_peak']['value'] >= held
"
else
    ok "without a GPU the fixed arena is skipped ($st), not oom" [ "$st" = skipped ]
    ok "the skip names the machine's reason" python3 -c "
import json, sys
r = json.load(open('gpu/results.json'))['records'][0]['reason']
print(r, file=sys.stderr)
assert 'CUDA' in r or 'cuda' in r, r
"
fi
finish
