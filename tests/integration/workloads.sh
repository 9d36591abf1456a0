#!/bin/sh
# One winner per workload and a verdict per setting, end to end on the
# real binary (tests/integration/suites/workloads.ini): the console, the
# report, best-N.ini, results.json and the speedup plot's blocks.
. "${top_srcdir:-.}/tests/integration/lib.sh"

sel() { json w/results.json "d['selection']$1"; }

"$DLBENCH" run "$SUITES/workloads.ini" --out w >w.out 2>w.err
ok "workloads suite exits 0" [ $? -eq 0 ]
ok "two workloads" [ "$(sel "['groups'].__len__()")" -eq 2 ]
ok "the workload key named" [ "$(sel "['workload_axes']")" = "['testload.samples_per_step']" ]
ok "no single winner across workloads" [ "$(sel "['winner']")" = None ]
ok "each workload's winner is the least work" [ "$(sel "['winners']")" = \
    "['testload.samples_per_step=1 testload.work=5000', 'testload.samples_per_step=4 testload.work=5000']" ]
ok "each against its own baseline" [ "$(sel "['groups'][1]['baseline']")" = \
    "testload.samples_per_step=4 testload.work=40000" ]
ok "speedup against its own workload's baseline" [ "$(json w/results.json \
    "round(d['selection']['per_config']['testload.samples_per_step=4 testload.work=5000']['speedup'])")" -eq 8 ]
ok "one verdict: the work setting" [ "$(sel "['verdicts'][0]['setting']")" = "testload.work=5000" ]
ok "only that one" [ "$(sel "['verdicts'].__len__()")" -eq 1 ]
ok "it pays off on every workload" [ "$(sel "['verdicts'][0]['summary']")" = "pays off on every workload" ]
ok "the console says the verdict first" sh -c \
    "grep -n '^verdicts' w.out | cut -d: -f1 | { read v; [ \"\$v\" -lt \"\$(grep -n '^winners' w.out | cut -d: -f1)\" ]; }"
ok "the console's verdict line" grep -q "^  testload.work=5000: pays off on every workload" w.out
ok "one winner line per workload, the winner said by what it sets beyond it" [ "$(grep -c '^  testload.samples_per_step=[14]: testload.work=5000, 8.00x (.*) over testload.work=40000' w.out)" -eq 2 ]
ok "report.md leads with the verdicts" grep -q "^## Verdicts" w/report.md
ok "report.md names each workload's winner" \
    [ "$(grep -c '^\*\*Winner for testload' w/report.md)" -eq 2 ]
ok "report.md's winner lines end their figures" sh -c "! grep -q '40000[.]00' w/report.md"
ok "report.html has the verdicts" grep -q "<h2>Verdicts</h2>" w/report.html
for n in 1 2; do
    ok "best-$n.ini written" grep -q "^work = 5000" "w/best-$n.ini"
done
ok "no best.ini across workloads" [ ! -e w/best.ini ]
ok "the speedup plot's blocks" [ "$(grep -c '"\[testload.samples_per_step=[14]\]"' w/plots/speedup.dat)" -eq 2 ]

# Listed as none, the same axes are all settings: one workload, one winner.
"$DLBENCH" run "$SUITES/workloads.ini" --set workload_axes=none \
    --set "baseline=testload.samples_per_step=1 testload.work=40000" --out one >one.out 2>one.err
ok "workload_axes = none: one winner" [ "$(json one/results.json "d['selection']['winner']")" = \
    "testload.samples_per_step=4 testload.work=5000" ]
ok "workload_axes = none: best.ini" [ -s one/best.ini ]

# As settings, the baseline's two matches are two baselines: an error.
"$DLBENCH" run "$SUITES/workloads.ini" --set workload_axes=none --out two >two.out 2>two.err
ok "an ambiguous baseline exits 2" [ $? -eq 2 ]
ok "the error says why" grep -q "matches 2 configurations with different settings" two.err

# A misspelt key is an error naming the line.
sed 's/^workload_axes = .*/workload_axes = testload.sample_per_step/' "$SUITES/workloads.ini" >bad.ini
"$DLBENCH" run bad.ini --out bad >bad.out 2>bad.err
ok "a misspelt workload key exits 2" [ $? -eq 2 ]
ok "the error names the line" grep -q "bad.ini:14: workload_axes" bad.err
finish
