#!/bin/sh
# dlbench bisect on scratch git repositories of 17 commits (GOOD and 16
# after it) whose suite file, bench.ini, runs testload on its synthetic
# clock: one commit plants a 10% slowdown (testload.work 20000 -> 22000).
# The "build" of a commit is its tree taken out with git archive, so the
# bisection's own machinery runs whole (the range from git, builds once
# per commit, runs interleaved in seeded random orders, repeats until each
# comparison is decisive) while builds cost nothing. Ten bisections, each
# with its own seed and planted commit, must each name the planted commit
# (BISECT_SEEDS=N runs the first N);
# a history that slows, recovers and slows again is followed to each
# change; a commit that does not build is gone around; GOOD and BAD alike
# is "not reproduced" (exit 1); an alert in a store gives the range, the
# suite and the configurations; bad usage exits 2.
. "${top_srcdir:-.}/tests/integration/lib.sh"

# scratch DIR WORK...: a repository with one commit per work figure.
scratch() {
    dir=$1
    shift
    git init -q "$dir" && git -C "$dir" config user.email t@example.org &&
        git -C "$dir" config user.name test || return 1
    i=0
    for w in "$@"; do
        printf '[suite]\nname = bench\nworkload = testload\nwarmup = 0.002s\ntime_cap = 0.005s\nmin_samples = 5\n[testload]\nclock = synthetic\nnoise = 0.02\nwork = %s\n' "$w" >"$dir/bench.ini"
        echo "$i" >"$dir/n.txt"
        git -C "$dir" add -A && git -C "$dir" commit -q -m "commit $i" || return 1
        i=$((i + 1))
    done
}

# works AT: 17 work figures, 22000 from commit AT on.
works() {
    i=0
    while [ $i -lt 17 ]; do
        if [ $i -ge "$1" ]; then printf '22000 '; else printf '20000 '; fi
        i=$((i + 1))
    done
}

BUILD='d=$PWD/../builds-$(basename "$PWD")/$DLB_BISECT_COMMIT; mkdir -p "$d" && git archive "$DLB_BISECT_COMMIT" | tar -x -C "$d" && echo "$d"'
# No plots (gnuplot not found): drawing them takes longer than the run.
RUN='DLBENCH_GNUPLOT=/nonexistent "$DLBENCH" run "$DLB_BISECT_BUILD/bench.ini" --out "$DLB_BISECT_OUT" --seed "$DLB_BISECT_SEED"'
export DLBENCH

# BISECT_SEEDS: how many of the ten to run (10); .ci/run's sanitizer pass,
# where each run costs twice as much, runs 3.
seeds=${BISECT_SEEDS:-10}
found=0
for seed in $(seq 1 "$seeds"); do
    at=$(( (seed * 7) % 16 + 1 ))
    # shellcheck disable=SC2046 # the work figures are words
    scratch "r$seed" $(works "$at") || { echo "cannot make a scratch repository" >&2; exit 99; }
    planted=$(git -C "r$seed" rev-parse "HEAD~$((16 - at))")
    "$DLBENCH" bisect HEAD~16 HEAD --repo "r$seed" --suite bench --seed "$seed" \
        --build-cmd "$BUILD" --run-cmd "$RUN" --out "out$seed" --format json \
        >"b$seed.json" 2>"b$seed.err"
    rc=$?
    got=$(json "b$seed.json" "d['culprit']['commit']" 2>/dev/null)
    echo "seed $seed: planted commit $at, named $(json "b$seed.json" "d['culprit']['index']" 2>/dev/null), $(json "b$seed.json" "(d['builds'], d['runs'], round(d['seconds'], 1))" 2>/dev/null) (builds, runs, seconds), exit $rc" >&2
    [ "$rc" -eq 0 ] && [ "$got" = "$planted" ] && found=$((found + 1))
done
ok "$seeds bisections, each planted commit named ($found of $seeds)" [ "$found" -eq "$seeds" ]
ok "each with at most 7 builds" python3 -c "
import json
for s in range(1, $seeds + 1):
    d = json.load(open('b%d.json' % s))
    assert d['builds'] <= 7, (s, d['builds'])"
ok "the named commit measured against its parent: 1.10" \
    [ "$(json b1.json "round(d['culprit']['ratio'], 2)")" = 1.1 ]
ok "its subject and parent named" \
    [ "$(json b1.json "(d['culprit']['subject'], d['culprit']['parent_index'])")" = "('commit 8', 7)" ]
ok "the report and the document are kept" test -f out1/report.md -a -f out1/bisect.json
ok "runs interleaved: a round runs several commits" grep -q "round [0-9]*: #[0-9]* #[0-9]*" b1.err

# Slower at 4, back at 11, slower again at 14: each found, 4 named first.
scratch mixed 20000 20000 20000 20000 22000 22000 22000 22000 22000 22000 22000 20000 20000 20000 24000 24000 24000
"$DLBENCH" bisect HEAD~16 HEAD --repo mixed --suite bench --build-cmd "$BUILD" --run-cmd "$RUN" \
    --out out-mixed --format json >mixed.json 2>mixed.err
ok "a slowdown, a fix, a slowdown: the first named ($(json mixed.json "d['culprit']['index']"))" \
    [ "$(json mixed.json "d['culprit']['index']")" = 4 ]
ok "and the fix and the second slowdown found beside it" [ "$(json mixed.json \
    "sorted((p['to'], p['ratio'] > 1) for p in d['pairs'] if p['verdict'] == 'different' and p['to'] - p['from'] == 1)")" = \
    "[(4, True), (11, False), (14, True)]" ]

# A commit that does not build, next to the planted one.
scratch broken $(works 9)
nobuild=$(git -C broken rev-parse HEAD~8)
"$DLBENCH" bisect HEAD~16 HEAD --repo broken --suite bench --run-cmd "$RUN" --out out-broken \
    --build-cmd "[ \"\$DLB_BISECT_COMMIT\" != $nobuild ] && $BUILD" --format json >broken.json 2>broken.err
ok "around a commit that does not build: still named" [ "$(json broken.json "d['culprit']['index']")" = 9 ]
ok "the one that did not build is reported" \
    [ "$(json broken.json "[m['build'] for m in d['measured'] if m['index'] == 8]")" = "['failed']" ]

# Nothing to find.
scratch flat $(works 99)
"$DLBENCH" bisect HEAD~16 HEAD --repo flat --suite bench --build-cmd "$BUILD" --run-cmd "$RUN" \
    --out out-flat >flat.txt 2>flat.err
rc=$?
ok "GOOD and BAD alike: exit 1" [ $rc -eq 1 ]
ok "says not reproduced" grep -q "not reproduced" flat.txt

# From an alert: the range, the suite and the configurations.
CRAFT="$top_srcdir/tests/integration/craft-nights.py"
"$DLBENCH" run r1/bench.ini --out base >/dev/null 2>&1
git -C r1 rev-list --reverse HEAD >commits.txt
at1=$(( 7 % 16 + 1 ))
python3 "$CRAFT" base nights 17 --commits commits.txt --at "$at1" --step 0.10 --noise 0.003 >/dev/null
"$DLBENCH" store add s.db nights >/dev/null 2>&1
"$DLBENCH" changes s.db >/dev/null 2>&1
python3 "$CRAFT" base rerun 1 --first 16 --commits commits.txt --at "$at1" --step 0.10 --noise 0.003 --start 2026-05-02 >/dev/null
"$DLBENCH" store add s.db rerun >/dev/null 2>&1
"$DLBENCH" changes s.db >/dev/null 2>&1
ok "a raised alert to bisect" [ $? -eq 1 ]
"$DLBENCH" bisect --store s.db --alert 1 --repo r1 --build-cmd "$BUILD" --run-cmd "$RUN" \
    --out out-alert --format json >alert.json 2>alert.err
ok "bisect --alert names the planted commit ($(tail -1 alert.err))" \
    [ "$(json alert.json "d['culprit']['commit']")" = "$(git -C r1 rev-parse "HEAD~$((16 - at1))")" ]
ok "with the alert's suite and configuration" \
    [ "$(json alert.json "(d['suite'], d['configs'])")" = "('bench', ['default'])" ]

# Bad usage.
"$DLBENCH" bisect HEAD HEAD~16 --repo r1 --suite bench --out out-rev >/dev/null 2>rev.err
rc=$?
ok "BAD before GOOD: exit 2 ($(cat rev.err))" [ $rc -eq 2 ]
"$DLBENCH" bisect HEAD~16 HEAD --repo r1 --suite bench --out out1 >/dev/null 2>full.err
rc=$?
ok "an --out that holds a bisection: exit 2 ($(cat full.err))" [ $rc -eq 2 ]
"$DLBENCH" bisect nosuch HEAD --repo r1 --suite bench --out out-x >/dev/null 2>nosuch.err
rc=$?
ok "a commit that is not there: exit 2 ($(cat nosuch.err))" [ $rc -eq 2 ]
"$DLBENCH" bisect HEAD~16 HEAD --repo r1 --out out-y >/dev/null 2>&1
ok "no suite: exit 2" [ $? -eq 2 ]
"$DLBENCH" bisect HEAD~16 HEAD --repo r1 --suite bench --build-cmd false --out out-z >/dev/null 2>z.err
rc=$?
ok "GOOD does not build: exit 2 ($(tail -1 z.err))" [ $rc -eq 2 ]

finish
