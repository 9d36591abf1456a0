#!/bin/sh
# Auto-selection end to end on testload, whose `work` sets the step time so
# the winner is known: report.md, report.html and best.ini are written,
# best.ini runs the winner again, an impossible memory budget picks none
# (exit status 1), and search = halving finds the grid's winner, also
# across --resume. The suites time testload on its synthetic clock (a step
# is work x 1 ns), so every winner here is the same on any machine under
# any load; tests/bench/halving-vs-grid.sh compares the searches on real
# timings.
. "${top_srcdir:-.}/tests/integration/lib.sh"

sel() { json "$1/results.json" "d['selection']$2"; }

"$DLBENCH" run "$SUITES/select.ini" --out r >r.out 2>r.err
ok "select suite exits 0" [ $? -eq 0 ]
for f in report.md report.html best.ini results.json; do
    ok "$f written" [ -s "r/$f" ]
done
ok "winner is the least work" [ "$(sel r "['winner']")" = "testload.work=5000" ]
ok "baseline is the suite's" [ "$(sel r "['baseline']")" = "testload.work=40000" ]
ok "summary after the table" grep -q "^winner: testload.work=5000" r.out
# one workload: the winner whole, its baseline by what it sets otherwise,
# and the why without the id again
ok "... over the baseline (testload.work=40000)" \
    grep -q "^winner: testload.work=5000, [0-9.]*x ([0-9.]*-[0-9.]*) over the baseline (testload.work=40000)" r.out
ok "... why: it has the best" grep -q "^  why: it has the best throughput" r.out
ok "report.md names the winner" grep -q "Winner: testload.work=5000" r/report.md
ok "report.html is one page" sh -c "grep -q '</html>' r/report.html && ! grep -q '<img' r/report.html"
ok "best.ini has the winner's value" grep -q "^work = 5000" r/best.ini

"$DLBENCH" run r/best.ini --out again >/dev/null 2>again.err
ok "best.ini runs again" [ $? -eq 0 ]
ok "best.ini reran one configuration" [ "$(json again/results.json "len(d['records'])")" -eq 1 ]
ok "best.ini reran the winner" \
    [ "$(json again/results.json "d['records'][0]['config']['testload.work']")" = 5000 ]

# Nothing fits the budget: every configuration is marked, none chosen.
"$DLBENCH" run "$SUITES/select.ini" --set memory_budget=1K --out nofit >nofit.out 2>nofit.err
ok "no winner exits 1" [ $? -eq 1 ]
ok "no winner said" grep -q "no winner: no configuration meets every constraint" nofit.out
ok "every configuration marked" [ "$(sel nofit "['violations'].__len__()")" -eq 4 ]
ok "no best.ini without a winner" [ ! -e nofit/best.ini ]
ok "results kept without a winner" [ "$(json nofit/results.json "len(d['records'])")" -eq 4 ]

# Halving against the grid, at a short budget.
"$DLBENCH" run "$SUITES/halving.ini" --set time_cap=0.16s --out h >/dev/null 2>h.err
ok "halving exits 0" [ $? -eq 0 ]
"$DLBENCH" run "$SUITES/halving.ini" --set time_cap=0.16s --set search=grid --out g \
    >/dev/null 2>g.err
ok "grid exits 0" [ $? -eq 0 ]
ok "the grid's winner is the least work" [ "$(sel g "['winner']")" = testload.work=80000 ]
ok "halving finds the grid's winner" [ "$(sel h "['winner']")" = "$(sel g "['winner']")" ]
ok "halving ran 16 + 8 + 4 + 2 finalists and the baseline" [ "$(wc -l <h/journal.jsonl)" -eq 31 ]
ok "records carry their round" [ "$(json h/results.json "max(r['round'] for r in d['records'])")" -eq 3 ]
ok "screening rounds ran measure_only, the final round not" python3 -c "
import json,sys
r=[json.loads(l) for l in open('h/journal.jsonl')]
on=lambda x: str(x['config'].get('measure_only')).lower() in ('on','true','1')
sys.exit(0 if all(on(x) == (x['round'] < 3) for x in r) else 1)"

# Stopped by --time-limit between rounds, then resumed: same decisions.
"$DLBENCH" run "$SUITES/halving.ini" --set time_cap=0.16s --time-limit 0.1 --out hr \
    >/dev/null 2>hr.err
ok "time limit stops the search" [ $? -eq 1 ]
"$DLBENCH" --resume hr >/dev/null 2>hr2.err
ok "resumed halving exits 0" [ $? -eq 0 ]
ok "resumed halving: each (configuration, round) once" python3 -c "
import json,sys
k=[(json.loads(l)['index'],json.loads(l)['round']) for l in open('hr/journal.jsonl')]
sys.exit(0 if len(k)==len(set(k))==31 else 1)"
ok "resumed halving finds the winner" [ "$(sel hr "['winner']")" = "$(sel g "['winner']")" ]
for d in r nofit h g hr; do
    ok "$d: records read and written again are the same" round_trips $d
done
finish
