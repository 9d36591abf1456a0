#!/bin/sh
# The mempool plugin through the real binary: the suite in --quick form
# records the pool's figures, a fixed arena too small for the model is the
# configuration's oom status, a recorded allocation trace replays, and bad
# settings are refused at suite load with the file and line.
. "${top_srcdir:-.}/tests/integration/lib.sh"

SRC_SUITES="$top_srcdir/suites"

"$DLBENCH" --quick --suite "$SRC_SUITES/mempool.ini" --out run >/dev/null 2>err.txt
rc=$?
ok "quick mempool suite succeeds (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || cat err.txt >&2
R=run/results.json
ok "five configurations: off, caching x 3 releases, fixed" \
    [ "$(json $R "len(d['records'])")" = 5 ]
ok "the pool's figures are recorded when it is on" python3 -c "
import json, sys
d = json.load(open('$R'))
need = ['allocated_peak', 'reserved_peak', 'active_peak', 'system_allocs',
        'cache_hits', 'hit_rate', 'fragmentation', 'oom_retries']
for r in d['records']:
    m = r['metrics']
    if 'mempool.enable=off' in r['id']:
        assert not any(k.startswith('mempool.') for k in m), r['id']
        continue
    for k in need:
        assert 'mempool.' + k in m, (r['id'], k)
    assert m['mempool.reserved_peak']['value'] >= m['mempool.allocated_peak']['value'] > 0
    assert m['mempool.hit_rate']['value'] > 50, r['id']
"
# after_step gives back the segments wholly free at the step's end: at
# batch 64 LeNet's step (3.3 MB) shares its two 2 MiB segments with what
# lives across steps, so the check runs at 256, where it takes several.
"$DLBENCH" --quick --suite "$SRC_SUITES/mempool.ini" --out run-step --set batch=256 \
    --set mempool.enable=on --set mempool.mode=caching --set mempool.release=after_step \
    >/dev/null 2>err-step.txt
# a record without its metrics is a configuration that did not finish:
# its status, reason and the run's stderr say why
ok "after_step hands memory back every step" python3 -c "
import json
d = json.load(open('run-step/results.json'))
r = d['records'][0]
assert 'metrics' in r, (r.get('status'), r.get('reason'), open('err-step.txt').read()[-2000:])
m = r['metrics']
assert m['mempool.trimmed_bytes']['value'] > 0
assert m['mempool.system_frees']['value'] > 0
"
# Giving wholly free segments back before growing keeps the reserved peak
# near the allocated one (at batch 64 the 2 MiB segments alone cost more).
"$DLBENCH" --quick --suite "$SRC_SUITES/mempool.ini" --out run-miss --set batch=256 \
    --set mempool.enable=on --set mempool.mode=caching --set mempool.release=on_miss \
    >/dev/null 2>err-miss.txt
ok "release=on_miss keeps peak reserved within 1.3x of peak allocated" python3 -c "
import json
d = json.load(open('run-miss/results.json'))
m = d['records'][0]['metrics']
ratio = m['mempool.reserved_peak']['value'] / m['mempool.allocated_peak']['value']
assert ratio <= 1.3, ratio
"

# A fixed arena far too small for LeNet: the configuration runs out of
# memory, and that is its status, not a crash.
"$DLBENCH" --quick --suite "$SRC_SUITES/mempool.ini" --out run-oom \
    --set mempool.enable=on --set mempool.mode=fixed --set mempool.release=never \
    --set mempool.arena_size=64K >/dev/null 2>&1
ok "tiny arena exits 1" [ $? -eq 1 ]
ok "tiny arena is oom" [ "$(json run-oom/results.json "d['records'][0]['status']")" = oom ]
ok "oom counted by the pool" [ "$(json run-oom/results.json \
    "d['records'][0]['metrics']['mempool.oom_failures']['value'] > 0")" = True ]

# Record one training step's trace and replay it; the shipped trace
# replays from the source tree.
"$DLBENCH" --quick --suite "$SRC_SUITES/mempool.ini" --out run-rec \
    --set mempool.enable=on --set mempool.mode=caching --set mempool.release=never \
    --set mempool.trace_out="$T/step.trace" >/dev/null 2>&1
ok "recording run succeeds" [ $? -eq 0 ]
ok "trace written" grep -q '^a 0 ' "$T/step.trace"
"$DLBENCH" --quick --suite "$SRC_SUITES/mempool-replay.ini" --out run-rp \
    --set alloctrace.trace="$T/step.trace" >/dev/null 2>err.txt
ok "recorded trace replays" [ $? -eq 0 ]
(cd "$top_srcdir" && "$DLBENCH" --quick --suite suites/mempool-replay.ini \
    --out "$T/run-ship" >/dev/null 2>&1)
ok "shipped trace replays" [ $? -eq 0 ]
# Why the pool beats malloc/free (tests/bench/mempool-replay.sh times it
# on a quiet machine): every allocation of every step goes through it,
# and once the first step has grown it none reaches the system.
ok "replay: after the first step the pool serves every allocation itself" python3 -c "
import json
d = json.load(open('$T/run-ship/results.json'))
r = [r for r in d['records'] if 'enable=on' in r['id'] and 'caching' in r['id']
     and 'release=never' in r['id']][0]
m = {k: v['value'] for k, v in r['metrics'].items()}
steps = r['measure']['warmup_steps'] + r['stats']['n'] * r['measure']['steps_per_sample']
per = m['alloctrace.allocs_per_step']
assert m['mempool.cache_hits'] + m['mempool.system_allocs'] == steps * per, (m, steps)
assert m['mempool.system_allocs'] <= per and m['mempool.system_frees'] == 0, m
"

# Bad settings: refused at load, naming the file and line.
printf '[suite]\nname = bad\nworkload = alloctrace\n[alloctrace]\n[mempool]\narena_size = -1M\n' >neg.ini
"$DLBENCH" --suite neg.ini --out run-neg >/dev/null 2>neg.txt
ok "negative arena_size exits 2" [ $? -eq 2 ]
ok "negative arena_size names file and line" grep -q 'neg.ini:6' neg.txt
printf '[suite]\nname = bad\nworkload = alloctrace\n[mempool]\nmode = fast\n' >mode.ini
"$DLBENCH" --suite mode.ini --out run-mode >/dev/null 2>mode.txt
ok "unknown mode exits 2" [ $? -eq 2 ]
ok "unknown mode names file and line" grep -q 'mode.ini:5' mode.txt

"$DLBENCH" plugin-help mempool >help.txt 2>&1
ok "plugin-help lists every key" sh -c \
    'for k in mode release arena_size max_split_size large_round lock trace_out trace_step; do grep -q "^$k " help.txt || exit 1; done'
finish
