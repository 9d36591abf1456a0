#!/bin/sh
# A disk that fills up mid-run, imitated by a file-size limit: the run says
# which file could not be written and why, starts no configuration it could
# not keep, leaves every whole record in the journal and no partial line or
# temporary file behind, and --resume (with space again) finishes the run
# with each configuration exactly once.
. "${top_srcdir:-.}/tests/integration/lib.sh"

# limited BYTES CMD...: run CMD with RLIMIT_FSIZE at BYTES (shells disagree
# on the unit of `ulimit -f`).
limited() {
    python3 -c 'import os, resource, sys
n = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
os.execv(sys.argv[2], sys.argv[2:])' "$@"
}

# The limit is two and a half records of this machine (a record's size
# depends on its environment): the journal holds two, then the next append
# hits the limit. disk-full.ini takes five samples per configuration, so
# its records are of one size (a time_cap-driven suite's are not).
"$DLBENCH" --suite "$SUITES/disk-full.ini" --out probe >/dev/null 2>&1
rec=$(head -n 1 probe/journal.jsonl | wc -c)
ok "a probe run writes records ($rec bytes)" [ "$rec" -gt 100 ]
limited $((rec * 5 / 2)) "$DLBENCH" --suite "$SUITES/disk-full.ini" --out run >out.txt 2>err.txt
rc=$?
ok "exit status 1 (got $rc)" [ "$rc" -eq 1 ]
ok "names the journal and the reason ($(grep journal err.txt | head -1))" \
    grep -q "cannot write a record to run/journal.jsonl: File too large; free some space and use --resume" err.txt
ok "says what was not run and how to finish" \
    grep -q "the journal could not be written: .* not run; finish with: dlbench --resume run" err.txt
n=$(wc -l <run/journal.jsonl)
ok "earlier records kept ($n)" [ "$n" -ge 1 ] && [ "$n" -lt 6 ]
ok "no partial line: the journal ends with a newline" \
    [ "$(tail -c 1 run/journal.jsonl | od -An -c | tr -d ' ')" = '\n' ]
ok "every journal line whole" python3 -c "
import json
for l in open('run/journal.jsonl'): json.loads(l)"
ok "no temporary file left" sh -c "! ls -a run | grep -q '\.tmp'"
ok "no configuration started after the failed append" \
    [ "$(ls run/logs | wc -l)" -eq $((n + 1)) ]

cp run/journal.jsonl before.jsonl
"$DLBENCH" --resume run >/dev/null 2>resume.err
ok "--resume with space again exits 0" [ $? -eq 0 ]
ok "the kept records are untouched" \
    [ "$(head -n "$n" run/journal.jsonl | cmp - before.jsonl && echo same)" = same ]
ok "each configuration exactly once" python3 -c "
import json, sys
idx = sorted(json.loads(l)['index'] for l in open('run/journal.jsonl'))
sys.exit(idx != list(range(6)))"
ok "results.json has all six" [ "$(json run/results.json "len(d['records'])")" -eq 6 ]

# The results files themselves: earlier ones stay as they were.
cp run/results.json results-before.json
limited 2000 "$DLBENCH" --resume run >/dev/null 2>again.err
ok "rewriting results under the limit fails" [ $? -ne 0 ]
ok "and says which file ($(grep -m1 results again.err))" \
    grep -q "cannot write run/.results.json.tmp: File too large" again.err
ok "the earlier results.json intact" cmp -s results-before.json run/results.json
ok "no temporary file left after it" sh -c "! ls -a run | grep -q '\.tmp'"
finish
