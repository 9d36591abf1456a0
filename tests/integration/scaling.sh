#!/bin/sh
# A workload of twice the work measures 1.8-2.2x the time (medians, same run).
. "${top_srcdir:-.}/tests/integration/lib.sh"

"$DLBENCH" --suite "$SUITES/scaling.ini" --out run >/dev/null 2>err.txt
ok "run succeeds" [ $? -eq 0 ]
ratio=$(json run/results.json "d['records'][1]['stats']['median'] / d['records'][0]['stats']['median']")
echo "time ratio for twice the work: $ratio" >&2
ok "ratio $ratio within 1.8-2.2" python3 -c "import sys; r=float(sys.argv[1]); sys.exit(0 if 1.8 <= r <= 2.2 else 1)" "$ratio"
ok "timer overhead under 0.1% of a sample" python3 -c "
import json; d=json.load(open('run/results.json'))
for r in d['records']:
    m=r['measure']; assert m['timer_overhead_s'] < 0.001*r['stats']['median']*m['steps_per_sample'], m"
finish
