#!/bin/sh
# A --quick run under valgrind, parent and every configuration's process
# (gnuplot aside): no invalid read or write, no use of uninitialised
# memory, no definite leak. Skipped without valgrind, and in a sanitizer
# build (valgrind and AddressSanitizer cannot share a process). The suite
# is the harness's own (parent, runner, children, a plugin, results,
# selection, report): the reference CNN is minutes under valgrind, and
# the sanitizer build covers it.
. "${top_srcdir:-.}/tests/integration/lib.sh"

if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind not installed: skipped" >&2
    exit 77
fi
if nm "$DLBENCH" 2>/dev/null | grep -q __asan_init; then
    echo "AddressSanitizer build: skipped" >&2
    exit 77
fi

mkdir vg
# vgrun NAME DLBENCH-ARGS...: one valgrind log per process in vg/NAME.PID.
vgrun() {
    n=$1
    shift
    valgrind -q --trace-children=yes --trace-children-skip='*gnuplot*' \
        --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \
        --log-file="vg/$n.%p.log" "$DLBENCH" "$@" >"$n.out" 2>"$n.err"
}

vgrun harness --suite "$SUITES/ok.ini" --quick --out run
rc=$?
ok "harness: exit 0 under valgrind (got $rc; $(tail -1 harness.err))" [ "$rc" -eq 0 ]
ok "harness: a valgrind log for the parent and each configuration" \
    [ "$(ls vg/harness.*.log | wc -l)" -ge 4 ]
# -q leaves a log empty unless valgrind found something.
for f in vg/*.log; do
    ok "no valgrind finding in $f: $(grep -m1 -E 'Invalid|uninitialised|definitely lost|ERROR SUMMARY' "$f")" \
        [ ! -s "$f" ]
done
finish
