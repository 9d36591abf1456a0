#!/bin/sh
# stdout and stderr sent to one file (2>&1, as CI logs are): every line of
# dlbench's own messages starts a line, none lands in the middle of a table
# or verdict line. Issue: "amp.precision=bf16: dlbench: results in run",
# from a fully buffered stdout flushed in 4 KiB pieces.
. "${top_srcdir:-.}/tests/integration/lib.sh"

"$DLBENCH" --suite "$SUITES/console.ini" --out run >both.txt 2>&1
ok "the run: exit status 0" [ $? -eq 0 ]
ok "... more than 4 KiB on the console ($(wc -c <both.txt) bytes)" [ "$(wc -c <both.txt)" -gt 4096 ]
ok "... 'dlbench: results in' on a line of its own" grep -q '^dlbench: results in run$' both.txt
ok "... no message of dlbench's within another line" sh -c "! grep -n '.dlbench: ' both.txt"
finish
