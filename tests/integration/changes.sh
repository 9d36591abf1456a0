#!/bin/sh
# dlbench changes, alerts and thresholds over crafted nights (a real run
# scaled night by night; tests/integration/craft-nights.py): an 8% step
# in two configurations on two machines, the same commits on both, is one
# change group and one alert, not four; it is a candidate when first
# found, stays one when evaluated again on the same runs, and is raised
# (exit 1) once a further run confirms it; acknowledging it clears the
# exit status, dismissing needs a note, reopening raises it again; every
# change of state is kept as an event. Thresholds: a 3% step is a change
# point but no alert under the default 5%, an alert under a 2% rule, and
# a candidate whose rule is then raised to 10% is never raised
# (unconfirmed). Table, markdown and JSON; bad input exits 2.
. "${top_srcdir:-.}/tests/integration/lib.sh"

CRAFT="$top_srcdir/tests/integration/craft-nights.py"
"$DLBENCH" --suite "$SUITES/ok.ini" --set testload.clock=synthetic --out base >/dev/null 2>&1
ok "a real run to start from" [ -f base/results.json ]
A='testload.work=10000 testload.samples_per_step=1'
B='testload.work=10000 testload.samples_per_step=4'
C='testload.work=20000 testload.samples_per_step=1'
for m in ci-1 ci-2; do
    python3 "$CRAFT" base "$m" 26 --host "$m" --seed "${m#ci-}" --noise 0.005 \
        --at 20 --step 0.08 --config "$A" --config "$B" >/dev/null
done
for i in $(seq 0 23); do n=$(printf %03d "$i"); set -- "$@" "ci-1/night-$n" "ci-2/night-$n"; done
"$DLBENCH" store add s.db "$@" >/dev/null 2>&1

"$DLBENCH" changes s.db --format json >c1.json 2>c1.err
rc=$?
ok "four nights after the step: found, not raised yet: exit 0 ($(cat c1.err))" [ $rc -eq 0 ]
ok "one group: both configurations on both machines" \
    [ "$(json c1.json "[len(g['members']) for g in d['groups']]")" = "[4]" ]
ok "its range: the commits of nights 19 and 20" \
    [ "$(json c1.json "(d['groups'][0]['good_commit'], d['groups'][0]['bad_commit'])")" = \
      "$(python3 -c "import json; f=lambda i: json.load(open('ci-1/night-%03d/results.json' % i))['context']['dlbench']['git_commit']; print((f(19), f(20)))")" ]
ok "the sizes: about 1.08, within their intervals" python3 -c "
import json, sys
for m in json.load(open('c1.json'))['groups'][0]['members']:
    assert 1.06 < m['ratio'] < 1.10 and m['ratio_ci'][0] <= m['ratio'] <= m['ratio_ci'][1], m
    assert m['beyond'] == 'slower' and m['runs_before'] == 20 and m['runs_after'] == 4, m"
ok "alert 1, a candidate" [ "$(json c1.json "(d['groups'][0]['alert']['id'], d['groups'][0]['alert']['state'])")" = "(1, 'candidate')" ]
ok "to confirm: suite ok on both machines" \
    [ "$(json c1.json "sorted(x['machine'] for x in d['to_confirm'])")" = "['ci-1', 'ci-2']" ]
ok "the unmoved configuration has no change point" \
    [ "$(json c1.json "sum(m['config'] == '$C' for g in d['groups'] for m in g['members'])")" = 0 ]
"$DLBENCH" changes s.db --format json >c2.json 2>&1
ok "evaluated again on the same runs: still a candidate, exit 0" \
    sh -c "[ $? -eq 0 ] && [ \"\$(python3 -c \"import json; print(json.load(open('c2.json'))['groups'][0]['alert']['state'])\")\" = candidate ]"

# A further night: confirmed, raised, exit 1.
"$DLBENCH" store add s.db ci-1/night-024 ci-2/night-024 >/dev/null 2>&1
"$DLBENCH" changes s.db --format markdown >c3.md 2>&1
rc=$?
ok "a further run confirms it: exit 1" [ $rc -eq 1 ]
ok "markdown: raised, in bold" grep -q '\*\*alert 1: raised' c3.md
ok "markdown: each series a row" [ "$(grep -c '| ok: testload' c3.md)" = 4 ]
"$DLBENCH" changes s.db >c3.txt 2>&1
ok "table: the alert's state" grep -q "alert 1 new: slower" c3.txt
"$DLBENCH" alerts s.db >a1.txt 2>&1
ok "alerts lists it as new" grep -q "^1 *new *slower" a1.txt

"$DLBENCH" alerts s.db dismiss 1 >/dev/null 2>dis.err
rc=$?
ok "dismissing without a note: exit 2 ($(cat dis.err))" [ $rc -eq 2 ]
"$DLBENCH" alerts s.db ack 1 --note "bisecting: ana" >/dev/null 2>&1
ok "ack: exit 0" [ $? -eq 0 ]
"$DLBENCH" changes s.db >/dev/null 2>&1
ok "acknowledged: changes exits 0" [ $? -eq 0 ]
"$DLBENCH" alerts s.db reopen 1 >/dev/null 2>&1
"$DLBENCH" changes s.db >/dev/null 2>&1
ok "reopened: exit 1 again" [ $? -eq 1 ]
"$DLBENCH" alerts s.db dismiss 1 --note "expected: the new kernel trades speed for accuracy" >/dev/null 2>&1
"$DLBENCH" changes s.db >/dev/null 2>&1
ok "dismissed: exit 0" [ $? -eq 0 ]
"$DLBENCH" alerts s.db --all --format json >a2.json
ok "its events, in order" [ "$(json a2.json "[e['state'] for e in d[0]['events']]")" = \
    "['candidate', 'new', 'acknowledged', 'new', 'dismissed']" ]
ok "the note kept" [ "$(json a2.json "d[0]['note']")" = "expected: the new kernel trades speed for accuracy" ]
"$DLBENCH" alerts s.db >a3.txt
ok "a dismissed alert is not open" grep -q "no open alerts" a3.txt
"$DLBENCH" alerts s.db ack 7 >/dev/null 2>noalert.err
rc=$?
ok "ack of an alert that is not there: exit 2 ($(cat noalert.err))" [ $rc -eq 2 ]

# Thresholds: a 3% step.
python3 "$CRAFT" base small 30 --noise 0.003 --at 20 --step 0.03 --config "$A" >/dev/null
for i in $(seq 0 25); do "$DLBENCH" store add t.db "small/night-$(printf %03d "$i")" >/dev/null 2>&1; done
"$DLBENCH" changes t.db --format json >t1.json 2>&1
ok "a 3% step: a change point, exit 0" [ $? -eq 0 ]
ok "within the default 5%: no alert" \
    [ "$(json t1.json "[(g['direction'], g['alert']) for g in d['groups']]")" = "[('within', None)]" ]
"$DLBENCH" thresholds t.db set ok "*samples_per_step=1" 2 >/dev/null 2>&1
ok "a rule of 2%: set" [ $? -eq 0 ]
"$DLBENCH" changes t.db --format json >t2.json 2>&1
ok "under it, a candidate" [ "$(json t2.json "d['groups'][0]['alert']['state']")" = candidate ]
ok "with its threshold" [ "$(json t2.json "d['groups'][0]['members'][0]['threshold']")" = 0.02 ]
"$DLBENCH" thresholds t.db set ok "*" 10 >/dev/null 2>&1
"$DLBENCH" thresholds t.db set ok "testload.work=10000 *samples_per_step=1" 10 >/dev/null 2>&1
"$DLBENCH" thresholds t.db --format json >rules.json
ok "thresholds lists the rules" [ "$(json rules.json "len(d)")" = 3 ]
"$DLBENCH" store add t.db small/night-026 >/dev/null 2>&1
"$DLBENCH" changes t.db --format json >t3.json 2>&1
ok "the most specific rule (10%) applies" [ "$(json t3.json "d['groups'][0]['members'][0]['threshold']")" = 0.1 ]
"$DLBENCH" alerts t.db --all --format json >t-alerts.json
ok "so the candidate is not raised: unconfirmed" [ "$(json t-alerts.json "d[0]['state']")" = unconfirmed ]
"$DLBENCH" thresholds t.db unset ok nothing-like-this >/dev/null 2>&1
ok "unset of a rule that is not there: exit 2" [ $? -eq 2 ]
"$DLBENCH" thresholds t.db set ok "*" 0 >/dev/null 2>&1
ok "a threshold of 0: exit 2" [ $? -eq 2 ]

# --no-record changes nothing; bad input exits 2.
cp t.db t2.db
"$DLBENCH" changes t2.db --no-record --alpha 0.05 >/dev/null 2>&1
ok "--no-record writes no alert" cmp -s t.db t2.db
printf 'garbage garbage garbage garbage garbage garbage garbage garbage\n' >bad.db
"$DLBENCH" changes bad.db >/dev/null 2>bad.err
rc=$?
ok "a file that is no store: exit 2 ($(cat bad.err))" [ $rc -eq 2 ]
"$DLBENCH" changes s.db --format yaml >/dev/null 2>&1
ok "--format yaml: exit 2" [ $? -eq 2 ]
"$DLBENCH" changes >/dev/null 2>&1
ok "no store: exit 2" [ $? -eq 2 ]

finish
