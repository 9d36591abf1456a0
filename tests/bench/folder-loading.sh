#!/bin/sh
# Benchmark, run by hand on a quiet machine (not part of `make check`): the
# seed's `num_workers` question on real decoding work. ResNet-18 trains at
# batch BATCH (32) from a JPEG folder at 3x224x224 (tests/data/
# make-image-folders.sh: Fashion-MNIST as RGB JPEG, 1,000 training
# images), augmentation on, with the batches loaded inside the step
# (dataloader off) and by the dataloader plugin with 0, 1 and 2 workers
# (prefetch 2). ROUNDS (3) processes of each, alternating, in one sitting.
# Prints per setting the median step time, the stall share (time the step
# waited for its batch / step time) and the loader alone in images/s
# (decoded, resized, cropped, augmented, normalised), per worker thread,
# with the spread between processes.
#
#   top_srcdir=. DLBENCH=build/dlbench sh tests/bench/folder-loading.sh [OUT]
#
# The folder is made once in OUT/folders (the tool from `make check`:
# build/tests/data/make-image-folder; MAKE_IMAGE_FOLDER names another).
set -u
: "${top_srcdir:=.}"
: "${DLBENCH:=dlbench}"
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/folder-loading.XXXXXX")}
rounds=${ROUNDS:-3}
batch=${BATCH:-32}
top=$(cd "$top_srcdir" && pwd) || exit 2
mkdir -p "$out" || exit 2
tool=${MAKE_IMAGE_FOLDER:-$(dirname "$DLBENCH")/tests/data/make-image-folder}
if [ ! -d "$out/folders/jpeg-224" ]; then
    [ -x "$tool" ] || { echo "folder-loading: no $tool: run make check (or make tests/data/make-image-folder) first" >&2; exit 2; }
    "$tool" --size 224 --channels 3 --format jpeg --train 100 --test 20 "$out/folders/jpeg-224" >/dev/null ||
        exit 2
fi
plugdir=$(dirname "$DLBENCH")/plugins/.libs

# one round: every setting once, in a fresh process each
r=1
while [ "$r" -le "$rounds" ]; do
    for s in off 0 1 2; do
        if [ "$s" = off ]; then enable=off; workers=0; else enable=on; workers=$s; fi
        printf '%s\n' '[suite]' 'name = folder-loading' 'mode = train' 'model = resnet18' \
            "dataset = folder:$out/folders/jpeg-224" 'backend = cpu' "batch = $batch" \
            'augment = on' 'train_steps = 4' 'warmup = 2s' 'time_cap = 10s' 'min_samples = 8' \
            'timeout = 900s' 'plugins = dataloader' '' '[dataloader]' \
            "enable = $enable" "workers = $workers" 'prefetch = 2' 'bench_images = 256' \
            >"$out/suite-$s.ini"
        d=$out/run-$s-$r
        rm -rf "$d"
        "$DLBENCH" --plugin-dir "$plugdir" --suite "$out/suite-$s.ini" --out "$d" \
            >"$d.log" 2>&1 || { echo "folder-loading: $d failed (log $d.log)" >&2; exit 1; }
        echo "round $r: setting $s done" >&2
    done
    r=$((r + 1))
done

python3 - "$out" "$rounds" "$batch" <<'PY'
import json, os, statistics, sys
out, rounds, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def rec(s, r):
    d = json.load(open(os.path.join(out, 'run-%s-%d' % (s, r), 'results.json')))
    return d['records'][0]
def metric(x, k):
    m = x.get('metrics', {}).get(k)
    return m['value'] if m else None
def span(v):
    v = [x for x in v if x is not None]
    if not v:
        return '-'
    return '%.4g (%.4g-%.4g)' % (statistics.median(v), min(v), max(v))
print('ResNet-18 training at batch %d from a JPEG folder at 3x224x224, %d processes each' % (batch, rounds))
print('%-16s %-28s %-24s %-30s %-26s' % ('loading', 'step ms, median (range)', 'stall share %', 'loader images/s', 'per worker thread'))
for s in ('off', '0', '1', '2'):
    recs = [rec(s, r) for r in range(1, rounds + 1)]
    step = [x['stats']['median'] * 1e3 for x in recs]
    stall = [metric(x, 'dataloader.stall_share') for x in recs]
    ips = [metric(x, 'dataloader.loader_images_per_s') for x in recs]
    w = int(s) if s not in ('off', '0') else 1
    per = [v / w if v is not None else None for v in ips]
    name = 'in the step' if s == 'off' else '%s workers' % s
    print('%-16s %-28s %-24s %-30s %-26s' % (name, span(step), span(stall), span(ips), span(per)))
PY
