#!/bin/sh
# Benchmark, run by hand on a quiet machine (not part of `make check`): a
# real bisection. A scratch clone of this repository at HEAD gets 16
# commits; one of them (PLANT, the 11th) makes every training and
# inference step of the CNN workload spin SPIN iterations of a dependent
# chain first (in core/child/workload_cnn.c's cnn_step), the others touch
# a text file. `dlbench bisect HEAD~16 HEAD --suite SUITE` then runs RUNS
# times (seeds 1..RUNS) with its defaults: each commit built by
# ci/build-rev (once: later runs find it in the cache) and run with its
# own dlbench, SUITE --quick. Prints, per run, the commit named, the
# builds, the runs and the time; exits 1 unless every run named the
# planted commit.
#
#   top_srcdir=. DLBENCH=build/dlbench sh tests/bench/bisect.sh [RUNS]
#
# Called again with the same OUT, it reuses OUT/repo and its builds
# (so the builds can be made first, under load, and the timed runs later
# on a quiet machine: PREBUILD="0 8 10 11 12 16" builds those positions
# after GOOD, the ones a bisection of the 11th commit measures, and exits).
#
# OUT (a new temporary folder), SUITE (baseline), PLANT (11), SPIN
# (200000: LeNet's quick training step 1.3-1.65x as long on 2 cores of
# an Intel Xeon, 2026-12-04; fewer for a subtler step). The first run builds the
# commits it measures (minutes each); XDG_CACHE_HOME is OUT/cache, so the
# builds are this benchmark's own.
set -u
: "${top_srcdir:=.}"
: "${DLBENCH:=dlbench}"
runs=${1:-10}
suite=${SUITE:-baseline}
plant=${PLANT:-11}
spin=${SPIN:-200000}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bisect-bench.XXXXXX")}
top=$(cd "$top_srcdir" && pwd) || exit 2
mkdir -p "$out" || exit 2
XDG_CACHE_HOME=$out/cache
export XDG_CACHE_HOME

repo=$out/repo
if [ -f "$out/planted" ]; then
    planted=$(cat "$out/planted")
    echo "bisect bench: reusing $repo (planted $planted)" >&2
else
git clone -q --no-local "$top" "$repo" || exit 2
git -C "$repo" config user.email bench@example.org
git -C "$repo" config user.name bisect-bench
i=1
while [ "$i" -le 16 ]; do
    if [ "$i" -eq "$plant" ]; then
        python3 - "$repo/core/child/workload_cnn.c" "$spin" <<'PY' || exit 2
import sys
path, spin = sys.argv[1], sys.argv[2]
s = open(path).read()
anchor = 'static dlb_status cnn_step(void *wl)\n{\n    struct cnn *c = wl;\n'
assert anchor in s, 'cnn_step changed: update tests/bench/bisect.sh'
s = s.replace(anchor, anchor + '    { volatile double x = 1; for (long i = 0; i < %s; i++) x = x * 0.9999999 + 1e-9; }\n' % spin)
open(path, 'w').write(s)
PY
        msg="cnn_step: spin $spin iterations first (the planted slowdown)"
    else
        echo "scratch commit $i" >>"$repo/doc/bisect-scratch.txt"
        git -C "$repo" add doc/bisect-scratch.txt
        msg="scratch commit $i"
    fi
    git -C "$repo" commit -q -a -m "$msg" || exit 2
    i=$((i + 1))
done
planted=$(git -C "$repo" rev-parse "HEAD~$((16 - plant))")
echo "$planted" >"$out/planted"
echo "bisect bench: 16 commits in $repo, planted $planted (#$plant), suite $suite" >&2
fi
if [ -n "${PREBUILD:-}" ]; then
    for pos in $PREBUILD; do
        "$top/ci/build-rev" --repo "$repo" "HEAD~$((16 - pos))" >/dev/null || exit 1
    done
    echo "bisect bench: built positions $PREBUILD in $XDG_CACHE_HOME" >&2
    exit 0
fi

found=0
r=1
while [ "$r" -le "$runs" ]; do
    t0=$(date +%s)
    "$DLBENCH" bisect HEAD~16 HEAD --repo "$repo" --suite "$suite" --seed "$r" \
        --out "$out/bisect-$r" --format json >"$out/bisect-$r.json" 2>"$out/bisect-$r.log"
    rc=$?
    got=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["culprit"]["commit"] if d["culprit"] else "-", d["builds"], d["runs"])' "$out/bisect-$r.json" 2>/dev/null)
    set -- $got
    [ "${1:-}" = "$planted" ] && found=$((found + 1))
    echo "run $r: exit $rc, named ${1:--}, ${2:-?} builds (built or cached), ${3:-?} runs, $(( $(date +%s) - t0 )) s"
    r=$((r + 1))
done
echo "bisect bench: the planted commit named in $found of $runs runs (runs in $out)"
[ "$found" -eq "$runs" ]
