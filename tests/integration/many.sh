#!/bin/sh
# Under load: a sweep of 40 configurations (one shard, a fifth of the
# 200 in suites/many.ini, --quick: about half a second each) runs every
# configuration with its step times, and the parent's memory does not grow
# with the number run. What the harness adds to the configurations' time
# is printed here, for the log; it is a wall-clock figure that a loaded
# machine stretches (the end of the run, each plot a gnuplot process,
# most), so tests/bench/many.sh, run on a quiet machine, is where it is
# held to its limits. tests/integration/harness-load.py defines the
# figures.
#
# Memory grew by 0-12 KiB from the 10th to the 39th configuration,
# against 512 KiB allowed (13 KiB per configuration, 380 KiB here, before
# records were kept slim).
. "${top_srcdir:-.}/tests/integration/lib.sh"

# AddressSanitizer's quarantine holds freed memory on purpose and its
# checks slow the parent more than the children: neither figure would be
# the harness's.
if nm "$DLBENCH" 2>/dev/null | grep -q __asan_init; then
    echo "AddressSanitizer build: skipped" >&2
    exit 77
fi

python3 "$top_srcdir/tests/integration/harness-load.py" run "$DLBENCH" \
    --suite "$SUITES/many.ini" --quick --shard 1/5 >load.json
cat load.json >&2
ok "exit status 0 ($(tail -1 run.err))" [ "$(json load.json "d['rc']")" -eq 0 ]
ok "40 records" [ "$(json load.json "d['records']")" -eq 40 ]
ok "results.json has 40 records with their step times" \
    [ "$(json run/results.json "sum(1 for r in d['records'] if len(r['samples']) > 0)")" -eq 40 ]

# share EXPR: the figure EXPR of load.json as a share of the
# configurations' own time.
share() {
    json load.json "'%.3f%%' % (100 * ($1) / d['configs_s'])"
}
echo "harness overhead (load average $(cut -d' ' -f1-3 /proc/loadavg)):" \
    "setup and between configurations $(share "d['setup_s'] + d['between_s']")," \
    "in all with the report and plots $(share "d['overhead_s']")" \
    "of the configurations' time" >&2

# Parent memory with 10 configurations behind it and while the last one
# runs (at the end the whole records come back from the journal for the
# results: that is after the sweep).
rss10=$(json load.json "d['rss_kib'][str(min(int(k) for k in d['rss_kib'] if int(k) >= 10))]")
rss39=$(json load.json "d['rss_kib'][str(max(int(k) for k in d['rss_kib'] if int(k) < 40))]")
ok "parent RSS flat: $rss10 KiB after 10 configurations, $rss39 KiB after 39" \
    [ $((rss39 - rss10)) -lt 512 ]
finish
