#!/bin/sh
# Benchmark, run by hand on a quiet machine (not part of `make check`): a
# store of real nightly runs and its dashboard, opened in Chromium.
#
# It takes the scratch history tests/bench/bisect.sh makes (OUT/repo, 16
# commits after GOOD, the 11th planting a slowdown in every CNN step) and
# that script's builds (PREBUILD="0 8 10 11 12 16"), and runs NIGHTS
# nights (60) in commit order, NIGHTS/6 on each of those six commits: each
# night one real `dlbench run SUITE --quick` of that commit's own build,
# added to a store with the commit's SHA. Then `dlbench changes` over the
# store, and `dlbench dashboard`, whose suite page headless Chromium
# (Debian's chromium) loads and photographs (OUT/nights/shot.png). Exits 1
# unless one change point was found and its commit range holds the planted
# commit.
#
#   OUT=/tmp/bb/out top_srcdir=. DLBENCH=build/dlbench sh tests/bench/dashboard-nights.sh
#
# SUITE (baseline), NIGHTS (60, a multiple of 6).
set -u
: "${top_srcdir:=.}"
: "${DLBENCH:=dlbench}"
suite=${SUITE:-baseline}
nights=${NIGHTS:-60}
out=${OUT:?OUT: the folder tests/bench/bisect.sh made (with PREBUILD)}
top=$(cd "$top_srcdir" && pwd) || exit 2
XDG_CACHE_HOME=$out/cache
export XDG_CACHE_HOME
repo=$out/repo
[ -f "$out/planted" ] || { echo "dashboard-nights: $out has no bisect bench repository: run tests/bench/bisect.sh with OUT=$out PREBUILD=\"0 8 10 11 12 16\" first" >&2; exit 2; }
planted=$(cat "$out/planted")
n=$out/nights
rm -rf "$n" && mkdir -p "$n" || exit 2
db=$n/store.db
per=$((nights / 6))
night=1
for pos in 0 8 10 11 12 16; do
    sha=$(git -C "$repo" rev-parse "HEAD~$((16 - pos))") || exit 2
    build=$("$top/ci/build-rev" --repo "$repo" "$sha" 2>/dev/null | tail -n 1)
    [ -x "$build/dlbench" ] || { echo "dashboard-nights: no build of $sha (position $pos)" >&2; exit 2; }
    k=0
    while [ "$k" -lt "$per" ]; do
        d=$(printf '%s/night-%02d' "$n" "$night")
        "$build/dlbench" run "$suite" --quick --plugin-dir "$build/plugins/.libs" \
            --out "$d" >"$d.log" 2>&1 || { echo "dashboard-nights: night $night failed (log: $d.log)" >&2; exit 1; }
        "$DLBENCH" store add "$db" "$d" --commit "$sha" --machine bench >>"$n/store.log" 2>&1 || exit 1
        night=$((night + 1))
        k=$((k + 1))
    done
    echo "dashboard-nights: $per nights on position $pos ($sha)" >&2
done

"$DLBENCH" changes "$db" --format json >"$n/changes.json" 2>"$n/changes.err"
echo "dashboard-nights: dlbench changes exited $? ($n/changes.json)" >&2
"$DLBENCH" changes "$db" >"$n/changes.txt" 2>/dev/null
cat "$n/changes.txt"
"$DLBENCH" dashboard "$db" --out "$n/site" >/dev/null 2>"$n/dashboard.err" || { cat "$n/dashboard.err" >&2; exit 1; }

browser=
for b in chromium chromium-browser google-chrome; do
    command -v "$b" >/dev/null 2>&1 && { browser=$b; break; }
done
if [ -n "$browser" ]; then
    page=$(ls "$n"/site/suite-*.html | head -n 1)
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
        --user-data-dir="$n/profile" --window-size=1300,1400 \
        --screenshot="$n/shot.png" "file://$page" >/dev/null 2>"$n/chrome.log"
    echo "dashboard-nights: $page photographed: $n/shot.png" >&2
else
    echo "dashboard-nights: no Chromium: the site is in $n/site, not photographed" >&2
fi

# The planted commit must lie in one change point's commit range, and
# there must be no other.
python3 - "$n/changes.json" "$repo" "$planted" <<'PY'
import json, subprocess, sys
doc = json.load(open(sys.argv[1]))
repo, planted = sys.argv[2], sys.argv[3]
groups = doc['groups']
def anc(a, b):
    return subprocess.run(['git', '-C', repo, 'merge-base', '--is-ancestor', a, b]).returncode == 0
hit = 0
for g in groups:
    inside = anc(g['good_commit'], planted) and anc(planted, g['bad_commit']) and g['good_commit'] != planted
    hit += inside
    print('change point %s..%s: %s, worst ratio %.3f, %d series%s' % (
        g['good_commit'][:12], g['bad_commit'][:12], g['direction'], g['worst_ratio'],
        len(g['members']), ' (holds the planted commit)' if inside else ''))
ns = doc['series']
print('%d change point(s) over %s series; the planted commit in %d' % (len(groups), len(ns) if isinstance(ns, list) else ns, hit))
sys.exit(0 if hit == 1 and len(groups) == 1 else 1)
PY
