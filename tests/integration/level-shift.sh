#!/bin/sh
# A level shift within one measurement (the machine's speed changing
# mid-run, as shared VMs do in phases of seconds) earns a warning naming
# the configuration, the size of the shift and both medians; a steady run
# earns none. Timed on testload's synthetic clock (level-shift.ini), so
# the shift is exactly a doubling of the work and the steady run has no
# shift whatever the machine's load does.
. "${top_srcdir:-.}/tests/integration/lib.sh"

"$DLBENCH" run "$SUITES/level-shift.ini" --out s >/dev/null 2>s.err
ok "run with a shift exits 0" [ $? -eq 0 ]
ok "the shift is reported ($(grep moved s.err))" \
    grep -q "warning: default: the step time moved +[0-9]*% from the first half" s.err
ok "twice the step time: +95% to +105%" python3 -c "
import re, sys
m = re.search(r'moved \+(\d+)%', open('s.err').read())
sys.exit(0 if m and 95 <= int(m.group(1)) <= 105 else 1)"
ok "the run is kept" [ "$(status_of s/results.json "$(json s/results.json "d['records'][0]['id']")")" = ok ]

"$DLBENCH" run "$SUITES/level-shift.ini" --set testload.slow_after=0 --out f >/dev/null 2>f.err
ok "steady run exits 0" [ $? -eq 0 ]
ok "a steady run has no shift warning" sh -c "! grep -q 'step time moved' f.err"
finish
