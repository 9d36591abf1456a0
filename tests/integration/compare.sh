#!/bin/sh
# dlbench compare, history and baseline on real runs and on runs crafted
# from them: the exit status a CI gate relies on (0 same or faster, 1 a
# significant slowdown beyond the threshold, 2 bad input), the three output
# forms, normalization across machines, and clear errors on bad files.
. "${top_srcdir:-.}/tests/integration/lib.sh"

# On testload's synthetic clock (a step is work x 1 ns, spread by up to
# 5% from the seed): the crafted runs below then differ from the base by
# exactly what was crafted, whatever the machine's load did to the base.
"$DLBENCH" --suite "$SUITES/ok.ini" --set testload.clock=synthetic --set testload.noise=0.05 \
    --out base >/dev/null 2>run.err
ok "the base run succeeds ($(tail -1 run.err))" [ -f base/results.json ]

# craft SRC DST PYTHON: DST/results.json is SRC's with each record r and
# its samples s changed by the Python statement (on r, s).
craft() {
    mkdir -p "$2"
    python3 - "$1/results.json" "$2/results.json" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d['records']:
    if r['status'] != 'ok':
        continue
    s = r['samples']
    exec(sys.argv[3])
    r['samples'] = s
json.dump(d, open(sys.argv[2], 'w'), indent=2)
PY
}
ID1='testload.work=10000 testload.samples_per_step=1'
craft base slower "s = [x * 1.25 for x in s] if r['id'] == '$ID1' else s"
craft base faster "s = [x * 0.75 for x in s] if r['id'] == '$ID1' else s"
craft base machine2x "s = [x * 2 for x in s]; d['context']['host'] = 'elsewhere'"

"$DLBENCH" compare base base >same.out 2>same.err
ok "identical runs: exit 0" [ $? -eq 0 ]
ok "identical runs: all same" grep -q "0 slower, 0 faster, 3 same" same.out

"$DLBENCH" compare base slower >slow.out 2>&1
ok "a crafted regression: exit 1" [ $? -eq 1 ]
ok "a crafted regression: says slower" grep -q "slower" slow.out
ok "a crafted regression: ratio 1.25" grep -q "1.250" slow.out
"$DLBENCH" compare --threshold 30 base slower >/dev/null 2>&1
ok "under --threshold 30: exit 0" [ $? -eq 0 ]

"$DLBENCH" compare base faster >fast.out 2>&1
ok "a crafted improvement: exit 0" [ $? -eq 0 ]
ok "a crafted improvement: says faster" grep -q "1 faster" fast.out

"$DLBENCH" compare base slower --format markdown >slow.md 2>&1
ok "markdown: a table" grep -q "^| configuration |" slow.md
ok "markdown: the slow row in bold" grep -q "\*\*slower\*\*" slow.md
"$DLBENCH" compare --format json base slower >slow.json 2>/dev/null
ok "json: exit 1 too" [ $? -eq 1 ]
ok "json: one slower" [ "$(json slow.json "d['counts']['slower']")" = 1 ]
ok "json: geometric mean" [ "$(json slow.json "round(d['geomean_ratio'], 2)")" = 1.08 ]

# Another machine, twice as slow at everything.
"$DLBENCH" compare base machine2x >m.out 2>&1
ok "another machine: absolute times regress" [ $? -eq 1 ]
ok "another machine: warned" grep -q "different machines" m.out
"$DLBENCH" compare --normalize base machine2x >mn.out 2>&1
ok "--normalize: exit 0 ($(tail -2 mn.out))" [ $? -eq 0 ]

# Another library under the same commit (a vendor's oneDNN, here a crafted
# jansson version, which every build records): warned, with
# both versions, in every output form; the same libraries: no warning.
craft base otherlib "d['context']['libraries']['jansson'] = '9.9.9'"
"$DLBENCH" compare base otherlib >lib.out 2>&1
ok "another library: warned with both versions" \
    grep -q "warning: the runs used different libraries (jansson 2[.0-9]* -> 9.9.9)" lib.out
"$DLBENCH" compare --format markdown base otherlib >lib.md 2>&1
ok "another library: in the markdown" grep -q "different libraries" lib.md
ok "the same libraries: no such warning" sh -c '! grep -q "different libraries" same.out'

# Bad input: exit 2 and the file named.
mkdir trunc corrupt
head -c 300 base/results.json >trunc/results.json
echo '{"schema": "dlbench-results", "schema_version": 1, "context": {}, "records": [{"id": 3}]}' >corrupt/results.json
"$DLBENCH" compare base trunc >/dev/null 2>trunc.err
ok "truncated: exit 2" [ $? -eq 2 ]
ok "truncated: names the file ($(cat trunc.err))" grep -q "trunc/results.json" trunc.err
"$DLBENCH" compare corrupt base >/dev/null 2>corrupt.err
ok "corrupt: exit 2" [ $? -eq 2 ]
ok "corrupt: names the file ($(cat corrupt.err))" grep -q "corrupt/results.json" corrupt.err
"$DLBENCH" compare base >/dev/null 2>&1
ok "one operand: exit 2" [ $? -eq 2 ]
"$DLBENCH" compare base nowhere >/dev/null 2>nowhere.err
ok "a missing run: exit 2" [ $? -eq 2 ]
ok "a missing run: named" grep -q nowhere nowhere.err

# history: the trend table, CSV and plot of several runs.
"$DLBENCH" history base faster slower --out hist >hist.out 2>hist.err
ok "history: exit 0 ($(cat hist.err))" [ $? -eq 0 ]
ok "history: one row per configuration" grep -q "$ID1" hist.out
ok "history: csv" [ "$(wc -l <hist/history.csv)" -eq 10 ]
ok "history: trend data and script" [ -s hist/trend.dat ] && [ -s hist/trend.gp ]
if command -v gnuplot >/dev/null 2>&1; then
    ok "history: trend.png is a PNG" [ "$(head -c 4 hist/trend.png | tail -c 3)" = PNG ]
    ok "history: trend.svg is SVG" grep -q "<svg" hist/trend.svg
fi

# baseline update, then check against it (ratios inside each run).
mkdir bl
"$DLBENCH" baseline update ok base --baseline-dir bl >bl.out 2>&1
ok "baseline update: exit 0 ($(cat bl.out))" [ $? -eq 0 ]
ok "baseline update: bl/ok.json" [ -s bl/ok.json ]
"$DLBENCH" baseline check ok machine2x --baseline-dir bl >bc.out 2>&1
ok "baseline check, slower machine: exit 0 ($(tail -1 bc.out))" [ $? -eq 0 ]
craft base rel "s = [x * 1.3 for x in s] if r['id'] != '$ID1' else s"
"$DLBENCH" baseline check ok rel --baseline-dir bl >bc2.out 2>&1
ok "baseline check, a relative regression: exit 1" [ $? -eq 1 ]
"$DLBENCH" baseline update other base --baseline-dir bl >/dev/null 2>bw.err
ok "baseline update of the wrong suite: exit 2" [ $? -eq 2 ]
"$DLBENCH" baseline check nosuch base --baseline-dir bl >/dev/null 2>&1
ok "baseline check without a baseline: exit 2" [ $? -eq 2 ]

finish
