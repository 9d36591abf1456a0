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

# A gnuplot that hangs (a shell waiting on a child that sleeps, as a stuck
# helper would): each plot's gnuplot is stopped after the limit, its whole
# process group with it, the warning names the plots, and the run carries
# on to the results and the report with the measurements' exit status.
printf '#!/bin/sh\nsleep 100000 &\necho "$$ $!" >>"%s/hung-pids"\nwait\n' "$T" >bin/hangs
chmod +x bin/hangs
start=$(date +%s)
DLBENCH_GNUPLOT_TIMEOUT=0.5 DLBENCH_GNUPLOT="$T/bin/hangs" "$DLBENCH" \
    --suite "$SUITES/ok.ini" --out run-hangs >hangs.out 2>hangs.err
rc=$?
took=$(( $(date +%s) - start ))
ok "hangs: exit status 0 (got $rc)" [ "$rc" -eq 0 ]
# The measurements take about a second, then three plots at 0.5 s each.
ok "hangs: finished in $took s, within 30 s" [ "$took" -le 30 ]
for f in results.json report.md report.html best.ini; do
    ok "hangs: $f written" [ -s "run-hangs/$f" ]
done
for p in throughput speedup steps; do
    ok "hangs: $p.dat and $p.gp kept" [ -s "run-hangs/plots/$p.dat" ] && [ -s "run-hangs/plots/$p.gp" ]
    ok "hangs: the warning names $p ($(grep -m1 'gnuplot took' hangs.err))" \
        grep -q "gnuplot took more than 0.5 s (DLBENCH_GNUPLOT_TIMEOUT) on plots .*$p" hangs.err
done
ok "hangs: says where the scripts are" \
    grep -q "are in run-hangs/plots: run .gnuplot NAME.gp. there" hangs.err
ok "hangs: a gnuplot started for each plot" [ "$(wc -l <hung-pids)" -ge 3 ]
# A killed process whose parent died too may stay a zombie (a container's
# init need not reap): dead all the same.
running() {
    if [ -r "/proc/$1/status" ]; then
        ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status"
    else
        kill -0 "$1" 2>/dev/null
    fi
}
alive=
for pid in $(cat hung-pids); do
    running "$pid" && alive="$alive $pid"
done
ok "hangs: nothing of a stopped gnuplot left running:$alive" [ -z "$alive" ]
[ -n "$alive" ] && kill $alive 2>/dev/null

# A limit that is not a number of seconds is refused before anything runs.
DLBENCH_GNUPLOT_TIMEOUT=soon "$DLBENCH" --suite "$SUITES/ok.ini" --out run-badlimit \
    >badlimit.out 2>badlimit.err
rc=$?
ok "bad limit: exit status 2 (got $rc)" [ "$rc" -eq 2 ]
ok "bad limit: names the variable ($(head -1 badlimit.err))" \
    grep -q "DLBENCH_GNUPLOT_TIMEOUT=soon: not a number of seconds" badlimit.err
ok "bad limit: no run directory" [ ! -e run-badlimit ]
finish
