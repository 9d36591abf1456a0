#!/bin/sh
# A crash, a hang, an abort, an early exit, a failure, an OOM and a skip in
# single configurations leave every other configuration's result intact.
. "${top_srcdir:-.}/tests/integration/lib.sh"

"$DLBENCH" --suite "$SUITES/faults.ini" --out run --set memory_limit=1G \
    --format csv >out.csv 2>err.txt
rc=$?
ok "exit status 1 when a configuration failed (got $rc)" [ "$rc" -eq 1 ]
R=run/results.json
ok "results.json written" [ -f "$R" ]
ok "journal has 8 lines" [ "$(wc -l <run/journal.jsonl)" -eq 8 ]
ok "healthy config after three faults ok" [ "$(status_of $R 'testload.fault=none')" = ok ]
ok "healthy config has its samples" \
    [ "$(json $R "len(d['records'][3]['samples']) >= 5")" = True ]
ok "healthy config has its figure" \
    [ "$(json $R "d['records'][3]['metrics']['testload.checksum']['value'] > 0")" = True ]
ok "segv crashed" [ "$(status_of $R testload.fault=segv)" = crashed ]
ok "segv reason names the signal" \
    sh -c "grep -q 'Segmentation fault' run/results.json"
ok "abort crashed" [ "$(status_of $R testload.fault=abort)" = crashed ]
ok "hang timed out" [ "$(status_of $R testload.fault=hang)" = timeout ]
ok "early exit failed" [ "$(status_of $R testload.fault=exit)" = failed ]
ok "fail failed" [ "$(status_of $R testload.fault=fail)" = failed ]
ok "unsupported skipped" [ "$(status_of $R testload.fault=unsupported)" = skipped ]
ok "skip reason from probe" \
    [ "$(json $R "[r['reason'] for r in d['records'] if r['id']=='testload.fault=unsupported'][0]")" \
      = "testload: fault=unsupported asks to be skipped" ]
ok "oom is oom" [ "$(status_of $R testload.fault=oom)" = oom ]
ok "csv has header + 8 rows" [ "$(wc -l <out.csv)" -eq 9 ]
ok "a log per configuration" [ "$(ls run/logs | wc -l)" -eq 8 ]
finish
