#!/bin/sh
# A suite whose name and description carry gnuplot's command syntax
# (system("..."), backquotes, a '!' shell escape, a quote to break out of
# a string) runs, its plots are drawn and valid, and nothing in those
# strings is executed. Without gnuplot the data and scripts are still
# written and the run says how to install it.
. "${top_srcdir:-.}/tests/integration/lib.sh"

if ! command -v gnuplot >/dev/null 2>&1; then
    echo "gnuplot not installed: skipped" >&2
    exit 77
fi

cat >hostile.ini <<EOF2
[suite]
name = ';system("touch q");' \`touch bq\` system("touch sys") !touch bang
description = !touch $T/bang2 \`touch $T/bq2\` system("touch $T/sys2") @GPVAL_TERM
workload = testload
warmup = 0.01s
time_cap = 0.1s
min_samples = 5

[sweep]
testload.work = 10000, 20000
EOF2

"$DLBENCH" --suite hostile.ini --out run >run.out 2>run.err
ok "the run succeeds ($(tail -1 run.err))" [ -f run/results.json ]
# gnuplot runs in run/plots: relative names would land there.
ok "the name reached the scripts' titles" grep -q "set title.*system(" run/plots/throughput.gp
for m in bang bq sys q bang2 bq2 sys2; do
    ok "nothing executed: no $m" [ ! -e "$T/$m" ] && [ ! -e "run/plots/$m" ]
done
for p in throughput speedup steps; do
    ok "$p.png is a PNG" [ "$(head -c 4 "run/plots/$p.png" | tail -c 3)" = PNG ]
    ok "$p.svg is SVG" grep -q "<svg" "run/plots/$p.svg"
    ok "$p.dat and $p.gp beside it" [ -s "run/plots/$p.dat" ] && [ -s "run/plots/$p.gp" ]
done
# The scripts rerun as they are, still executing nothing.
(cd run/plots && gnuplot throughput.gp) 2>/dev/null
ok "rerunning a script executes nothing" [ ! -e run/plots/sys ] && [ ! -e run/plots/bq ] \
    && [ ! -e run/plots/q ] && [ ! -e run/plots/bang ]

# Without gnuplot: data and scripts, no images, and the way to install it.
DLBENCH_GNUPLOT=/nonexistent/gnuplot "$DLBENCH" --suite hostile.ini --out bare \
    >bare.out 2>bare.err
ok "without gnuplot: the run succeeds" [ -f bare/results.json ]
ok "without gnuplot: data and script" [ -s bare/plots/throughput.dat ] && [ -s bare/plots/throughput.gp ]
ok "without gnuplot: no PNG" [ ! -e bare/plots/throughput.png ]
ok "without gnuplot: says how to install it" grep -q "apt-get install gnuplot-nox" bare.err

finish
