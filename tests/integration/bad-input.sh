#!/bin/sh
# Each malformed suite gets a one-line error naming the file and line (or
# the option), exit status 2, and no run directory is created.
. "${top_srcdir:-.}/tests/integration/lib.sh"

B="$SUITES/bad"
# expect FILE LINE PHRASE
expect() {
    "$DLBENCH" --suite "$B/$1" --out "run-$1" >/dev/null 2>"$1.err"
    rc=$?
    ok "$1: exit 2 (got $rc)" [ "$rc" -eq 2 ]
    ok "$1: one line" [ "$(wc -l <"$1.err")" -eq 1 ]
    ok "$1: names $1:$2 ($(cat "$1.err"))" grep -q "$1:$2" "$1.err"
    ok "$1: says '$3'" grep -qi -- "$3" "$1.err"
    ok "$1: no run directory" [ ! -e "run-$1" ]
}
expect unknown-key.ini 3 "did you mean 'batch'"
expect unknown-section.ini 3 "sweep"
expect wrong-type.ini 3 "integer"
expect out-of-range.ini 4 "work"
expect empty-sweep.ini 4 "testload.work"
expect unknown-plugin.ini 3 "did you mean 'testload'"
expect malformed.ini 3 ""
expect bad-choice.ini 4 "did you mean 'segv'"
expect missing-model.ini 3 "model 'no-such-model-file' not found"
"$DLBENCH" --suite "$B/all-filtered.ini" --out run-af >/dev/null 2>af.err
ok "all filtered: exit 2" [ $? -eq 2 ]
ok "all filtered: says so ($(cat af.err))" grep -q "filters exclude all" af.err
ok "all filtered: no run directory" [ ! -e run-af ]

# Unknown suite, unreadable file, bad options.
"$DLBENCH" --suite no-such-suite >/dev/null 2>e1
ok "unknown suite exits 2" [ $? -eq 2 ]
ok "unknown suite is named" grep -q "no-such-suite" e1
cp "$SUITES/ok.ini" unreadable.ini
chmod 000 unreadable.ini
if [ "$(id -u)" -ne 0 ]; then
    "$DLBENCH" --suite ./unreadable.ini >/dev/null 2>e2
    ok "unreadable suite exits 2" [ $? -eq 2 ]
fi
"$DLBENCH" --suite "$SUITES/ok.ini" --set testload.work=abc >/dev/null 2>e3
ok "bad --set exits 2" [ $? -eq 2 ]
ok "bad --set names the option" grep -q -- "--set testload.work=abc" e3
"$DLBENCH" --suite "$SUITES/ok.ini" --set testload.wrok=5 >/dev/null 2>e4
ok "misspelt --set key exits 2" [ $? -eq 2 ]
ok "misspelt --set key suggests" grep -q "did you mean 'testload.work'" e4
"$DLBENCH" --suite "$SUITES/ok.ini" --format xml >/dev/null 2>e5
ok "bad --format exits 2" [ $? -eq 2 ]
"$DLBENCH" frobnicate >/dev/null 2>e6
ok "unknown command exits 2" [ $? -eq 2 ]

# A results directory that exists is refused and left untouched.
mkdir existing
echo precious >existing/results.json
"$DLBENCH" --suite "$SUITES/ok.ini" --out existing >/dev/null 2>e7
ok "existing run dir exits 2" [ $? -eq 2 ]
ok "existing run dir untouched" [ "$(cat existing/results.json)" = precious ]
ok "existing run dir: nothing added" [ "$(ls existing | wc -l)" -eq 1 ]
ok "existing run dir error says what to do" grep -q -- "--resume" e7
finish
