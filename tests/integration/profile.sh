#!/bin/sh
# profile = ops on the real binary: every record lists, per layer and
# operation, the kernel that ran, its calls and its time per step; every
# label is one of the model file's layer names (the profile is written
# after the model that named the operations is closed, so it keeps its
# own copy of each name), the calls per step are whole numbers, and the
# shares add up to no more than the step. LeNet (a chain) and ResNet-20 (a
# graph with adds) train and infer on ref, and on cpu where it is built
# (speed figures only: ref's plain loops would take minutes to train and
# score ResNet-20).
. "${top_srcdir:-.}/tests/integration/lib.sh"

backends=ref
"$DLBENCH" list 2>/dev/null | grep -q '^  cpu  *available' && backends="ref cpu"

printf '%s\n' '[suite]' 'name = profile' 'model = lenet' 'dataset = synthetic' \
    'train_steps = 2' 'batch = 4' 'warmup = 0s' 'time_cap = 0.05s' \
    'min_samples = 3' 'timeout = 300s' 'profile = ops' 'measure_only = on' '' '[sweep]' \
    "backend = $(echo $backends | sed 's/ /, /')" 'mode = train, infer' >prof.ini

# names MODEL: the section names of a shipped model file, one per line,
# and the loss layer a network with `loss = cross_entropy` gets
names() {
    sed -n 's/^\[\([^]]*\)\]$/\1/p' "$top_srcdir/suites/models/$1.ini" | grep -v '^net$'
    grep -q '^loss *= *cross_entropy' "$top_srcdir/suites/models/$1.ini" && echo cross_entropy
}

for m in lenet resnet20; do
    "$DLBENCH" --suite prof.ini --set model=$m --out "$m" >"$m.out" 2>"$m.err"
    ok "$m: exit 0" [ $? -eq 0 ]
    names $m >"$m.names"
    n=$(json "$m/results.json" "len(d['records'])")
    i=0
    while [ "$i" -lt "$n" ]; do
        r="d['records'][$i]"
        id=$(json "$m/results.json" "$r['id']")
        ok "$m $id: ok" [ "$(json "$m/results.json" "$r['status']")" = ok ]
        ok "$m $id: a profile of operations" \
            [ "$(json "$m/results.json" "len($r['profile']['ops']) > 0")" = True ]
        json "$m/results.json" "'\n'.join(sorted({o['layer'] for o in $r['profile']['ops'] if o['layer']}))" >"$m.$i.labels"
        bad=$(grep -v -x -F -f "$m.names" "$m.$i.labels" | head -n 3 | tr '\n' ' ')
        ok "$m $id: every label is a layer of the model (not: $bad)" [ -z "$bad" ]
        ok "$m $id: every convolution layer named" [ "$(json "$m/results.json" \
            "all(o['layer'] for o in $r['profile']['ops'] if o['op'] == 'conv2d')")" = True ]
        ok "$m $id: whole calls per step" [ "$(json "$m/results.json" \
            "all(abs(o['calls_per_step'] - round(o['calls_per_step'])) < 1e-9 and o['calls_per_step'] >= 1 for o in $r['profile']['ops'])")" = True ]
        ok "$m $id: every op names its kernel" [ "$(json "$m/results.json" \
            "all(o['kernel'] for o in $r['profile']['ops'])")" = True ]
        i=$((i + 1))
    done
    ok "$m: records round-trip" round_trips "$m"
    # the report shows it: per configuration its line, its longest
    # operation first under it, in both formats
    ok "$m: report.md has the profile's section" grep -q '^## Where the time goes' "$m/report.md"
    ok "$m: report.html has it" grep -q '<h2>Where the time goes</h2>' "$m/report.html"
    ok "$m: one line per configuration" \
        [ "$(grep -c '^- .* ms a step over [0-9]* operations' "$m/report.md")" -eq "$n" ]
    ok "$m: each record's longest operation listed first under it" python3 -c "
import json
d = json.load(open('$m/results.json'))
# Markdown's escapes taken out
text = open('$m/report.md').read().replace('\\\\', '')
lines = text.split('## Where the time goes')[1].splitlines()
for r in d['records']:
    top = max(r['profile']['ops'], key=lambda o: o['time_per_step_s'])
    i = lines.index(next(l for l in lines if l.startswith('- ' + r['id'] + ':')))
    want = ' '.join(w for w in (top['op'], top['prop']) if w) + ' on %s, ' % top['kernel']
    assert lines[i + 1].startswith('    - ') and want in lines[i + 1], (lines[i + 1], want)
"
done
finish
