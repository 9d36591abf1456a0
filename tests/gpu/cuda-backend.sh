#!/bin/sh
# The cuda backend as a user meets it, on any machine of a CUDA build:
# `dlbench list` and `info` load the module and name the backend available,
# or unavailable with the machine's reason (no driver, no device), never
# "not built in"; `--backend cuda` on the baseline suite's quick form runs
# its configuration where a GPU is present and skips it with that reason
# where none is, and the run itself succeeds either way.
. "${top_srcdir:-.}/tests/integration/lib.sh"

"$DLBENCH" list >list.txt 2>&1
ok "list exits 0" [ $? -eq 0 ]
line=$(grep -E '^ +cuda ' list.txt)
echo "$line" >&2
ok "list has a cuda line" [ -n "$line" ]
ok "the module loads (not 'not built in', not 'cannot load')" \
    sh -c "! echo '$line' | grep -Eq 'not built in|cannot load|not a dlbench'"
"$DLBENCH" info >info.json 2>/dev/null
ok "info records the cuda backend" python3 -c "
import json; d=json.load(open('info.json')); b=d['backends']['cuda']
assert b['available'] or b['reason'], b"

"$DLBENCH" --suite baseline --quick --backend cuda --set train_steps=10 \
    --out run >out.txt 2>err.txt
rc=$?
cat err.txt >&2
ok "results.json written (rc $rc)" [ -s run/results.json ]
id=$(json run/results.json "d['records'][0]['id']")
st=$(status_of run/results.json "$id")
if echo "$line" | grep -Eq 'cuda +available'; then
    ok "the configuration ran on the GPU ($st)" [ "$st" = ok ]
    ok "run exits 0" [ "$rc" -eq 0 ]
else
    ok "the configuration is skipped without a GPU ($st)" [ "$st" = skipped ]
    ok "the skip names the reason" python3 -c "
import json,sys; d=json.load(open('run/results.json')); r=d['records'][0]['reason']
print(r, file=sys.stderr); assert 'CUDA' in r, r"
fi
finish
