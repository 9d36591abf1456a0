# Shared helpers for the integration tests: each test is a shell script that
# runs the real dlbench binary and checks the files it writes.
# Exit status follows automake: 0 pass, 1 fail, 77 skip.
set -u

: "${DLBENCH:?set DLBENCH to the dlbench binary (make check does)}"
: "${top_srcdir:=.}"
SUITES="$top_srcdir/tests/integration/suites"

T=$(mktemp -d "${TMPDIR:-/tmp}/dlbench-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

fails=0
checks=0

# ok DESCRIPTION COMMAND...: run the command, count a failure if it fails.
# The typed record reader and writer (core/results/record.h): every record of a
# run directory's journal and results.json, read and written again, is the
# same document.
READ_INPUT="$top_builddir/tests/bad-input/read-input"
round_trips() {
    "$READ_INPUT" round-trip "$1/journal.jsonl" &&
        "$READ_INPUT" round-trip "$1/results.json"
}

ok() {
    desc=$1
    shift
    checks=$((checks + 1))
    if "$@"; then
        :
    else
        fails=$((fails + 1))
        echo "FAIL: $desc" >&2
    fi
}

# json FILE EXPR: print a value from a JSON file (python3's json module).
json() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# status_of FILE ID: the status of the record with that id in results.json.
status_of() {
    json "$1" "[r['status'] for r in d['records'] if r['id']=='$2'][0]"
}

finish() {
    echo "$checks checks, $fails failed" >&2
    [ "$fails" -eq 0 ]
    exit $?
}
