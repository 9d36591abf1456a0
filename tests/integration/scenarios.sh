#!/bin/sh
# MLPerf-style inference scenarios end to end on the real binary.
# First on testload's synthetic clock (tests/integration/suites/scenarios.ini),
# where every figure is known: single-stream's p90 is the step (0.1 ms),
# offline's samples/s is samples_per_step / step, the server's search
# brackets an M/D/1 queue's crossing below 1 / step, and a second run gives
# the same figures. Then the shipped suites/scenarios.ini on LeNet (--quick),
# where the figures are the machine's: the test checks that they are there
# and consistent, never how large they are.
. "${top_srcdir:-.}/tests/integration/lib.sh"

SUITE="$SUITES/scenarios.ini"
# the lines of report.md's scenarios section
section() { sed -n '/^## Inference scenarios/,/^## Configurations/p' "$1"; }
scen() { # FILE ID EXPR on s (the record's scenario member)
    json "$1" "[(lambda s: $3)(r['scenario']) for r in d['records'] if r['id']=='$2'][0]"
}
SS='scenario=singlestream testload.samples_per_step=1'
OF1='scenario=offline testload.samples_per_step=1'
OF4='scenario=offline testload.samples_per_step=4'
SV1='scenario=server testload.samples_per_step=1'
SV4='scenario=server testload.samples_per_step=4'

"$DLBENCH" run "$SUITE" --out a >a.out 2>a.err
ok "the synthetic scenarios suite exits 0" [ $? -eq 0 ]
ok "five configurations, all ok" [ "$(json a/results.json \
    "sorted(set(r['status'] for r in d['records'])) == ['ok'] and len(d['records'])")" = 5 ]
ok "single-stream: p90 is the step, 0.1 ms" [ "$(scen a/results.json "$SS" \
    "round(s['figure']['value'] * 1e9) == 100000 and s['figure']['name'] == 'p90_latency'")" = True ]
ok "single-stream: at least the minimum queries, one at a time" [ "$(scen a/results.json "$SS" \
    "s['queries'] >= 300 and s['max_batch'] == 1 and s['valid'] is True")" = True ]
ok "offline: 10000 samples/s at 1 a step" [ "$(scen a/results.json "$OF1" \
    "round(s['figure']['value'])")" = 10000 ]
ok "offline: 40000 samples/s at 4 a step" [ "$(scen a/results.json "$OF4" \
    "round(s['figure']['value'])")" = 40000 ]
ok "server: the valid rate is under one step's capacity" [ "$(scen a/results.json "$SV1" \
    "5000 < s['figure']['value'] < 10000 and s['valid'] is True")" = True ]
ok "server: the search converged within its resolution" [ "$(scen a/results.json "$SV1" \
    "s['search']['converged'] and s['search']['qps_hi'] - s['search']['qps_lo'] <= 0.05 * s['search']['qps_lo']")" = True ]
ok "server: the figure is the highest valid probe's rate" [ "$(scen a/results.json "$SV1" \
    "s['figure']['value'] == s['search']['qps_lo'] == max(p['target_qps'] for p in s['search']['probes'] if p['valid'])")" = True ]
ok "server: every probe listed with its rate, queries and verdict" [ "$(scen a/results.json "$SV1" \
    "len(s['search']['probes']) >= 3 and all(p['target_qps'] > 0 and p['queries'] > 0 and isinstance(p['valid'], bool) and p['why'] for p in s['search']['probes'])")" = True ]
ok "server: the valid run's p99 is within the bound" [ "$(scen a/results.json "$SV1" \
    "s['latency_s']['p99'] <= s['rules']['latency_bound_s'] == 0.002")" = True ]
ok "server: an invalid probe says the p99 was over the bound" [ "$(scen a/results.json "$SV1" \
    "any('above the bound' in p['why'] for p in s['search']['probes'] if not p['valid'])")" = True ]
ok "server: batching 4 a step serves more, never past 4 / step" [ "$(scen a/results.json "$SV4" \
    "10000 < s['figure']['value'] <= 40000 and s['max_batch'] <= 4")" = True ]
ok "every scenario: p50 <= p90 <= p99, a boolean verdict, a rate" [ "$(json a/results.json \
    "all(s['latency_s']['p50'] <= s['latency_s']['p90'] <= s['latency_s']['p99'] and isinstance(s['valid'], bool) and s['qps'] > 0 for s in (r['scenario'] for r in d['records']))")" = True ]
ok "the synthetic clock is said" [ "$(scen a/results.json "$SV1" "s['clock']")" = workload ]
ok "the console's scenario column" grep -q "scenario=server testload.samples_per_step=1 .*server 9687 queries/s" a.out
ok "report.md's scenarios section" grep -q "^## Inference scenarios" a/report.md
ok "report.md: a line per scenario" [ "$(section a/report.md | grep -c '^- scenario=')" -eq 5 ]
ok "report.md: a line per probe" [ "$(section a/report.md | grep -c '^    - probe [0-9]*: ')" -eq "$(json a/results.json \
    "sum(len(r['scenario'].get('search', {}).get('probes', [])) for r in d['records'])")" ]
ok "report.md: the best offline batch" grep -q "^- offline, .*the best batch is 4, 40000 samples/s" a/report.md
ok "report.md says the figures are indicative" grep -q "Indicative, not a submission" a/report.md
ok "report.html's scenarios section" grep -q "<h2>Inference scenarios</h2>" a/report.html
ok "results.json and the journal read back as written" round_trips a
ok "results.csv's scenario columns" python3 -c '
import csv, sys
rows = {r["id"]: r for r in csv.DictReader(open("a/results.csv"))}
r = rows[sys.argv[1]]
assert r["scenario.name"] == "offline" and r["scenario.unit"] == "samples/s"
assert round(float(r["scenario.figure"])) == 10000 and r["scenario.valid"] == "true"
' "$OF1"

"$DLBENCH" run "$SUITE" --out b >b.out 2>b.err
ok "the same seed gives the same scenarios" [ "$(json a/results.json \
    "[r['scenario'] for r in d['records']]")" = "$(json b/results.json \
    "[r['scenario'] for r in d['records']]")" ]

"$DLBENCH" run "$SUITE" --set mode=train --out t >t.out 2>t.err
ok "mode = train: the scenarios are skipped" [ "$(json t/results.json \
    "sorted(set(r['status'] for r in d['records']))")" = "['skipped']" ]
ok "... with the reason" grep -q "scenario = server measures inference" t/results.json

# A bound below the step (0.1 ms on the synthetic clock): every query
# waits a step at least, so the search stops at its first probe and says
# why, instead of halving the rate through every probe.
"$DLBENCH" run "$SUITE" --set scenario=server --set server_latency_bound=0.05ms \
    --out u >u.out 2>u.err
ok "bound under the step: the run exits 0" [ $? -eq 0 ]
ok "... one probe, nothing valid, not converged" [ "$(scen u/results.json "$SV1" \
    "len(s['search']['probes']) == 1 and s['search']['qps_lo'] is None and not s['search']['converged'] and not s['valid']")" = True ]
ok "... the probe says no rate can meet the bound" [ "$(scen u/results.json "$SV4" \
    "'one step of 0.1 ms as measured before, takes longer than the bound, so no rate can meet it' in s['why']")" = True ]
ok "... report.md says the search stopped there" [ "$(section u/report.md | \
    grep -c 'searched: 1 probe of [0-9]* queries; stopped there, as no rate can meet the bound')" -eq 2 ]

# The shipped suite on LeNet, CI-sized: the figures are this machine's.
"$DLBENCH" run "$top_srcdir/suites/scenarios.ini" --quick --out l >l.out 2>l.err
ok "suites/scenarios.ini --quick exits 0" [ $? -eq 0 ]
ok "LeNet: each scenario ran, ok" [ "$(json l/results.json \
    "sorted(r['scenario']['name'] for r in d['records'] if r['status'] == 'ok')")" = \
    "['offline', 'offline', 'server', 'server', 'singlestream']" ]
ok "LeNet: p50 <= p90 <= p99 and a rate above 0" [ "$(json l/results.json \
    "all(s['latency_s']['p50'] <= s['latency_s']['p90'] <= s['latency_s']['p99'] and s['qps'] > 0 for s in (r['scenario'] for r in d['records']))")" = True ]
ok "LeNet: valid is a boolean, with the reason" [ "$(json l/results.json \
    "all(isinstance(r['scenario']['valid'], bool) and r['scenario']['why'] for r in d['records'])")" = True ]
ok "LeNet: single-stream's and offline's figures are above 0" [ "$(json l/results.json \
    "all(r['scenario']['figure']['value'] > 0 for r in d['records'] if r['scenario']['name'] != 'server')")" = True ]
ok "LeNet: the server searches list their probes" [ "$(json l/results.json \
    "all(1 <= len(r['scenario']['search']['probes']) <= 8 and all(isinstance(p['valid'], bool) for p in r['scenario']['search']['probes']) for r in d['records'] if r['scenario']['name'] == 'server')")" = True ]
ok "LeNet: a server figure is a valid probe's rate, or none" [ "$(json l/results.json \
    "all(s['figure']['value'] is None or s['figure']['value'] in [p['target_qps'] for p in s['search']['probes'] if p['valid']] for s in (r['scenario'] for r in d['records'] if r['scenario']['name'] == 'server'))")" = True ]
ok "LeNet: the monotonic clock" [ "$(json l/results.json \
    "sorted(set(r['scenario']['clock'] for r in d['records']))")" = "['monotonic']" ]
ok "LeNet: report.md's lines" [ "$(section l/report.md | grep -c '^- scenario=')" -eq 5 ]
ok "LeNet: the console's column" grep -q "scenario=singlestream batch=1 .*singlestream p90 [0-9.]* ms" l.out

# Single-stream issues one sample per query: another batch is skipped,
# before any work, with the way out.
sed -e 's/^skip = .*//' -e 's/^scenario = .*/scenario = singlestream/' \
    -e 's/^batch = 1, 8, 64/batch = 8/' -e '/^\[quick\]/,$d' \
    "$top_srcdir/suites/scenarios.ini" >ss8.ini
"$DLBENCH" run ss8.ini --out s >s.out 2>s.err
ok "single-stream at batch 8 is skipped" [ "$(json s/results.json "d['records'][0]['status']")" = skipped ]
ok "... saying it needs batch = 1" grep -q "needs batch = 1, not 8" s/results.json
finish
