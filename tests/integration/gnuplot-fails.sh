#!/bin/sh
# gnuplot missing, failing or crashing: every result and report file is
# still written, the plots' data and scripts are there to rerun, the run
# says what went wrong and where gnuplot's own words are, and the exit
# status is that of the measurements (0 here).
. "${top_srcdir:-.}/tests/integration/lib.sh"

mkdir bin
printf '#!/bin/sh\necho "line 1: unexpected end of input" >&2\nexit 1\n' >bin/fails
printf '#!/bin/sh\nkill -SEGV $$\n' >bin/crashes
chmod +x bin/fails bin/crashes

# check CASE GNUPLOT WORDS: run ok.ini with DLBENCH_GNUPLOT=GNUPLOT.
check() {
    DLBENCH_GNUPLOT=$2 "$DLBENCH" --suite "$SUITES/ok.ini" --out "run-$1" \
        >"$1.out" 2>"$1.err"
    rc=$?
    ok "$1: exit status 0 (got $rc)" [ "$rc" -eq 0 ]
    for f in journal.jsonl results.json results.csv table.txt report.md \
             report.html best.ini; do
        ok "$1: $f written" [ -s "run-$1/$f" ]
    done
    ok "$1: all three records" [ "$(json "run-$1/results.json" "len(d['records'])")" -eq 3 ]
    ok "$1: the winner chosen" grep -q "^winner:" "$1.out"
    for p in throughput speedup steps; do
        ok "$1: $p.dat and $p.gp kept" [ -s "run-$1/plots/$p.dat" ] && [ -s "run-$1/plots/$p.gp" ]
        ok "$1: no $p.png" [ ! -e "run-$1/plots/$p.png" ]
    done
    ok "$1: says '$3' ($(grep gnuplot "$1.err" | head -1))" grep -q -- "$3" "$1.err"
}
check missing "$T/bin/no-such-gnuplot" "gnuplot not found, so run-missing/plots holds each plot's data and script"
check fails "$T/bin/fails" "gnuplot failed on run-fails/plots/throughput.gp (exit status 1); see run-fails/plots/gnuplot.log"
ok "fails: gnuplot's words kept in its log" grep -q "unexpected end of input" run-fails/plots/gnuplot.log
check crashes "$T/bin/crashes" "gnuplot died on run-crashes/plots/throughput.gp (signal 11)"
finish
