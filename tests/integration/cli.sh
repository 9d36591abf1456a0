#!/bin/sh
# The command line: version, help, list, plugin-help, info, formats, --set.
. "${top_srcdir:-.}/tests/integration/lib.sh"

ok "--version" sh -c "'$DLBENCH' --version | grep -q '^dlbench [0-9]'"
# The commit is the source's as it was built, not as it was configured
# (a build directory kept across pulls records the new one).
# The commit of the source, where it is the top of a git checkout (not a
# release tarball unpacked inside another one, as make distcheck does).
head=$(sh "$top_srcdir/ci/git-commit" "$top_srcdir" "")
if [ -n "$head" ]; then
    ok "--version names the commit built ($head)" sh -c "'$DLBENCH' --version | grep -q '(commit $head)'"
else
    ok "--version outside a checkout: commit unknown" sh -c "'$DLBENCH' --version | grep -q '(commit unknown)'"
fi
ok "--help mentions --suite" sh -c "'$DLBENCH' --help | grep -q -- '--suite'"
"$DLBENCH" list >list.txt 2>&1
ok "list exits 0" [ $? -eq 0 ]
ok "list shows null available" grep -Eq "null +available" list.txt
ok "list shows a refused plugin with why" grep -Eq "abi_major +unavailable .*ABI" list.txt
ok "list shows backends" grep -q "^backends:" list.txt
ok "list shows ref backend" grep -Eq "ref +available" list.txt
# Suites: each once, sorted, aligned, and the file `--suite NAME` takes:
# the first directory of the search path that has it.
mkdir -p mine
sed 's/^description = .*/description = my own amp/' "$top_srcdir/suites/amp.ini" >mine/amp.ini
DLBENCH_SUITE_PATH="mine:$top_srcdir/suites:$top_srcdir/suites" "$DLBENCH" list >list2.txt 2>&1
sed -n '/^suites:/,/^backends:/p' list2.txt | sed '1d;$d' >suites.txt
ok "list names each suite once" [ "$(awk '{print $1}' suites.txt | sort | uniq -d | wc -l)" -eq 0 ]
ok "list sorts the suites" sh -c 'awk "{print \$1}" suites.txt | LC_ALL=C sort -c'
ok "list shows the suite the search path finds first" grep -Eq "^  amp +my own amp \(mine/amp.ini\)$" suites.txt
ok "list aligns a name longer than 12 characters" grep -Eq "^  mempool-replay allocation" suites.txt
ok "list aligns the descriptions" [ "$(awk '{ print index($0, $2) }' suites.txt | sort -u | wc -l)" -eq 1 ]
"$DLBENCH" plugin-help skeleton >help.txt
ok "plugin-help exits 0" [ $? -eq 0 ]
ok "plugin-help lists enable" grep -q "enable" help.txt
"$DLBENCH" plugin-help testload >help2.txt
ok "plugin-help shows fault choices" grep -q "segv" help2.txt
"$DLBENCH" plugin-help suite >help3.txt
ok "plugin-help suite exits 0" [ $? -eq 0 ]
ok "plugin-help suite lists workload_axes" grep -q "^ *workload_axes" help3.txt
ok "plugin-help suite lists train_samples" grep -q "^ *train_samples" help3.txt
# Core keys are read as typed fields (cfg->core.batch), which a renamed
# key breaks at compile time: no source looks one up by its name.
ok "no source reads a core key by its name" sh -c \
    "! grep -rn 'dlb_config_core(' '$top_srcdir/core' '$top_srcdir/plugins'"
# The table that prints the help is made from the one list of keys:
# every key of suite_keys.def, in its order, and no other.
grep -oE '^DLB_CORE_KEY\([a-z_0-9]+, "[a-z_.0-9]+"' \
    "$top_srcdir/core/suite/suite_keys.def" | sed 's/.*"\(.*\)"/\1/' >list-keys.txt
awk 'seen {print $1} $1 == "KEY" {seen = 1}' help3.txt >help-keys.txt
ok "suite_keys.def lists the keys" [ "$(wc -l <list-keys.txt)" -ge 40 ]
ok "plugin-help suite prints the keys of suite_keys.def in its order" \
    cmp -s list-keys.txt help-keys.txt
"$DLBENCH" plugin-help nosuch >/dev/null 2>err.txt
ok "plugin-help unknown exits 2" [ $? -eq 2 ]
"$DLBENCH" info >info.json
ok "info is JSON with a cpu model" python3 -c "
import json; d=json.load(open('info.json')); assert d['cpu']['model'] if isinstance(d.get('cpu'),dict) else d['cpu_model']"

# A run: table on stdout with a units row, JSON and CSV equal to the files.
"$DLBENCH" --suite "$SUITES/ok.ini" --out run >table.txt 2>err.txt
ok "run exits 0" [ $? -eq 0 ]
ok "three configurations after the skip filter" \
    [ "$(json run/results.json "len(d['records'])")" -eq 3 ]
ok "table printed" grep -q "testload.work=10000" table.txt
ok "table has a units row" grep -q "ms" table.txt
ok "table.txt in the run dir" cmp -s table.txt run/table.txt
ok "suite copied into the run dir" [ -f run/suite.ini ]
ok "context records the suite crc" [ -n "$(json run/results.json "d['context']['suite']['crc32']")" ]
ok "records hold raw samples and stats" python3 -c "
import json; d=json.load(open('run/results.json'))
for r in d['records']:
    assert r['status']=='ok' and len(r['samples'])>=5 and r['stats']['median']>0
    assert r['config']['testload.work'] in (10000,20000)
    assert r['throughput']['median']>0"
"$DLBENCH" --suite "$SUITES/ok.ini" --out run2 --format json --set testload.work=20000 >out.json 2>/dev/null
ok "--set on an axis keeps one value" [ "$(json out.json "len(d['records'])")" -eq 1 ]
ok "--format json is the results document" [ "$(json out.json "d['schema_version']")" -eq 1 ]
"$DLBENCH" run "$SUITES/ok.ini" --out run3 --quick --format csv >out.csv 2>/dev/null
ok "run NAME --quick --format csv" [ "$(wc -l <out.csv)" -ge 2 ]
ok "csv file equals csv output" cmp -s out.csv run3/results.csv
finish
