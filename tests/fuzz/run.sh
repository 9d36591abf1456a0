#!/bin/sh
# Run each libFuzzer harness for FUZZ_SECONDS (default 60) on seed corpora
# taken from the tree; fail on any crash, leak, timeout or out-of-memory.
#
#   tests/fuzz/run.sh [NAME...]     (from the build directory, after make fuzz)
#
# FUZZ_DIR: where the harnesses are (default ./tests/fuzz); FUZZ_SRCDIR: the
# source tree (default: this script's ../..); FUZZ_OUT: where corpora, logs
# and crash inputs go (default: a new directory under ${TMPDIR:-/tmp}). A
# crash input is kept there as crash-NAME-*; add it to tests/bad-input/ with
# the fix.
set -u
seconds=${FUZZ_SECONDS:-60}
dir=${FUZZ_DIR:-./tests/fuzz}
src=${FUZZ_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
out=${FUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/dlbench-fuzz.XXXXXX")}
names=${*:-suite model idx results safetensors onnx image}

# seeds NAME DIR: copy the tree's files of that kind into DIR.
seeds() {
    case $1 in
    suite) set -- "$2" "$src"/suites/*.ini "$src"/tests/integration/suites/*.ini \
               "$src"/tests/integration/suites/bad/*.ini "$src"/tests/bad-input/suite/*.ini ;;
    model) set -- "$2" "$src"/suites/models/*.ini "$src"/tests/unit/models/*.ini \
               "$src"/tests/bad-input/model/*.ini ;;
    idx) set -- "$2" $(find "$src/tests/bad-input/idx" -type f -name '*ubyte*') ;;
    results) set -- "$2" "$src"/results/baselines/*.json "$src"/tests/bad-input/results/*.json \
                 "$src"/tests/bad-input/journal/*.jsonl "$src"/tests/bad-input/fixtures/*.json ;;
    safetensors) set -- "$2" "$src"/tests/bad-input/safetensors/*.safetensors ;;
    onnx) set -- "$2" "$src"/tests/data/onnx/*.onnx ;;
    image) set -- "$2" "$src"/tests/fuzz/seeds/image/* ;;
    esac
    d=$1
    shift
    n=0
    for f in "$@"; do
        [ -f "$f" ] || continue
        n=$((n + 1))
        cp "$f" "$d/seed-$n"
    done
}

failed=0
for name in $names; do
    bin=$dir/fuzz_$name
    if [ ! -x "$bin" ]; then
        echo "fuzz: $bin not found: run 'make fuzz' first" >&2
        exit 2
    fi
    mkdir -p "$out/$name/corpus" "$out/$name/seeds"
    seeds "$name" "$out/$name/seeds"
    # -rss_limit_mb: the readers' own limits (a 2 GiB IDX payload) stay
    # below it; -timeout: one input may not take 10 s.
    "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=3072 \
        -artifact_prefix="$out/crash-$name-" -print_final_stats=1 \
        "$out/$name/corpus" "$out/$name/seeds" >"$out/$name.log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$name.log")
    if [ $rc -eq 0 ]; then
        echo "fuzz: $name: ${runs:-?} inputs in $seconds s, no crash"
    else
        failed=$((failed + 1))
        echo "fuzz: $name: FAILED (status $rc) after ${runs:-?} inputs; log $out/$name.log:" >&2
        grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$out/$name.log" | head -n 8 >&2
    fi
done
echo "fuzz: corpora, logs and any crash inputs in $out"
[ $failed -eq 0 ]
