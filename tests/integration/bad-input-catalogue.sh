#!/bin/sh
# The bad-input catalogue, tests/bad-input/ (see its README.md): every
# malformed suite, model file, IDX data set, results.json, journal, run
# directory, safetensors checkpoint and plugin there must be refused with
# exit status 2 and one line naming the file, line or value (the case's
# .expect holds it), print nothing on standard output, and change nothing
# outside the run directory: no run directory, no cache, no file anywhere
# in the test's tree, and a resumed run directory left as it was.
. "${top_srcdir:-.}/tests/integration/lib.sh"

C=$top_srcdir/tests/bad-input
READ=$top_builddir/tests/bad-input/read-input
TP=${DLB_TEST_PLUGIN_DIR:?}
export TP
# Whatever dlbench might write for itself (caches, temporary files) lands
# in the test's tree, where the snapshots see it.
mkdir -p cache home tmp work out
DLBENCH_CACHE_DIR=$T/cache HOME=$T/home TMPDIR=$T/tmp XDG_CACHE_HOME=$T/cache
export DLBENCH_CACHE_DIR HOME TMPDIR XDG_CACHE_HOME

# Every file and directory under the test's tree but out/, and under the
# catalogue itself, with size, modification time and mode.
snapshot() {
    find "$T" "$C" -path "$T/out" -prune -o -printf '%p %s %T@ %m\n' | sort
}

cases=0
skipped=0
# check KIND/NAME CMD...: run one case; its expectation is in
# $C/KIND/NAME.expect.
check() {
    id=$1
    shift
    cases=$((cases + 1))
    expect=$(cat "$C/$id.expect")
    log=out/$(echo "$id" | tr / _)
    snapshot >"$log.before"
    "$@" >"$log.out" 2>"$log.err"
    rc=$?
    snapshot >"$log.after"
    ok "$id: exit status 2 (got $rc: $(head -c 300 "$log.err"))" [ "$rc" -eq 2 ]
    ok "$id: says '$expect' (said: $(head -c 400 "$log.err"))" grep -qF -- "$expect" "$log.err"
    ok "$id: one line on standard error" [ "$(wc -l <"$log.err")" -eq 1 ]
    ok "$id: nothing on standard output" [ ! -s "$log.out" ]
    ok "$id: nothing touched outside the run directory" cmp -s "$log.before" "$log.after"
}

# ---- suites: dlbench --suite FILE -----------------------------------------
for f in "$C"/suite/*.ini; do
    n=$(basename "$f" .ini)
    check "suite/$n" "$DLBENCH" --suite "$f" --out "$T/work/run-$n"
done

# ---- model files: named by a suite -----------------------------------------
for f in "$C"/model/*.ini; do
    n=$(basename "$f" .ini)
    printf '[suite]\nmodel = %s\nbackend = ref\n' "$f" >"work/model-$n.ini"
    check "model/$n" "$DLBENCH" --suite "work/model-$n.ini" --out "$T/work/run-$n"
done

# ---- IDX data sets: a small good set with the case's files over it ---------
# NAME.absent removes NAME; a directory replaces a file; _suite holds extra
# [suite] lines.
for d in "$C"/idx/*/; do
    n=$(basename "$d")
    ds=$T/work/data-$n
    python3 "$C/make-binary.py" good "$ds" || exit 1
    (cd "$d" && find . -type f ! -name _suite) | while read -r f; do
        f=${f#./}
        case $f in
        *.absent) rm -f "$ds/${f%.absent}" ;;
        */*) rm -f "$ds/${f%%/*}"; mkdir -p "$ds/$(dirname "$f")" ;;
        *) cp "$d/$f" "$ds/$f" ;;
        esac
    done
    { printf '[suite]\ndataset = fashion-mnist\ndataset_path = %s\nbackend = ref\n' "$ds"
      cat "$d/_suite" 2>/dev/null; } >"work/idx-$n.ini"
    check "idx/$n" "$DLBENCH" --suite "work/idx-$n.ini" --out "$T/work/run-$n"
done

# ---- results for compare: dlbench compare CASE GOOD ------------------------
"$DLBENCH" compare "$C/fixtures/results.json" "$C/fixtures/results.json" \
    >out/control.out 2>&1
ok "control: the good results fixture compares" [ $? -eq 0 ]
for f in "$C"/results/*.json "$C"/results/*/; do
    n=$(basename "$f" .json)
    check "results/$n" "$DLBENCH" compare "${f%/}" "$C/fixtures/results.json"
done

# ---- journals and run directories for --resume ------------------------------
# A run directory as dlbench leaves it: suite.ini, invocation.json, logs/.
rundir() {
    mkdir -p "$1/logs"
    cp "$C/fixtures/run-suite.ini" "$1/suite.ini"
    printf '{"suite": "%s", "sets": [], "quick": false, "plugin_dirs": []}\n' \
        "$C/fixtures/run-suite.ini" >"$1/invocation.json"
}
rundir work/control
head -n 1 "$C/journal/duplicate-record.jsonl" >work/control/journal.jsonl
"$DLBENCH" --resume work/control >/dev/null 2>out/control.err
ok "control: the fixture run directory resumes" [ $? -eq 0 ]
for f in "$C"/journal/*.jsonl; do
    n=$(basename "$f" .jsonl)
    rundir "work/journal-$n"
    cp "$f" "work/journal-$n/journal.jsonl"
    check "journal/$n" "$DLBENCH" --resume "work/journal-$n"
done
for d in "$C"/rundir/*/; do
    n=$(basename "$d")
    r=work/rundir-$n
    rundir "$r"
    (cd "$d" && find . -type f) | while read -r f; do
        f=${f#./}
        case $f in
        *.absent) rm -f "$r/${f%.absent}" ;;
        */*) mkdir -p "$r/$(dirname "$f")" ;;
        *) cp "$d/$f" "$r/$f" ;;
        esac
    done
    check "rundir/$n" "$DLBENCH" --resume "$r"
done

# ---- safetensors checkpoints: the reader, as the weights cache uses it -------
python3 - "$T/work/good.safetensors" <<'PY'
import json, struct, sys
h = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
h += b' ' * (-len(h) % 8)
open(sys.argv[1], 'wb').write(struct.pack('<Q', len(h)) + h + struct.pack('<2f', 1, 2))
PY
ok "control: a good checkpoint reads" "$READ" safetensors "$T/work/good.safetensors"
for f in "$C"/safetensors/*.safetensors; do
    n=$(basename "$f" .safetensors)
    check "safetensors/$n" "$READ" safetensors "$f"
done

# ---- plugins: each case script breaks $PLUGIN ($P/NAME.so) -------------------
# NAME is testload unless the script says "# plugin: NAME"; the suite names
# it, and --plugin-dir $P puts $P first in the search path.
mkdir -p work/plug-control/plugins
cp "$TP/testload.so" work/plug-control/plugins/
"$DLBENCH" plugin-help testload --plugin-dir work/plug-control/plugins \
    >out/control.out 2>&1
ok "control: a good plugin copy loads" [ $? -eq 0 ]
for f in "$C"/plugin/*.sh; do
    n=$(basename "$f" .sh)
    P=$T/work/plug-$n/plugins
    name=$(sed -n 's/^# plugin: *//p' "$f")
    name=${name:-testload}
    PLUGIN=$P/$name.so
    mkdir -p "$P"
    chmod 0755 "$T/work/plug-$n" "$P"
    export P PLUGIN
    sh "$f" 2>"out/plugin-$n.setup"
    st=$?
    if [ $st -eq 77 ]; then
        skipped=$((skipped + 1))
        echo "plugin/$n: skipped (needs root)" >&2
        continue
    fi
    ok "plugin/$n: the case's set-up ran" [ $st -eq 0 ]
    { cat "$C/fixtures/plugin-suite.ini"
      [ "$name" = testload ] || printf '[%s]\n' "$name"; } >"work/plug-$n.ini"
    check "plugin/$n" "$DLBENCH" --suite "work/plug-$n.ini" \
        --plugin-dir "$P" --out "$T/work/run-plug-$n"
done
# The refused files must not stop the clean-up (a directory made
# world-writable or given away is still ours to remove as root).
chmod -R u+rwX work 2>/dev/null

echo "$cases bad inputs tried, $skipped skipped" >&2
finish
