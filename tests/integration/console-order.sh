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
# The progress lines print their figures as the table does: 61465
# samples/s, never 6.147e+04, which does not read beside its neighbours.
ok "... progress lines with samples/s over 10000" grep -Eq '^\[[0-9]+/32\] .*: ok, [0-9.]+ ms/step, [0-9]{5,} samples/s' both.txt
ok "... no exponent in a progress line" sh -c "! grep -E '^\[[0-9]+/[0-9]+\] .*[0-9]e[+-][0-9]' both.txt"
# A time_cap under a few steps (2 ms each on the synthetic clock): 2
# samples, whose range is no 95% interval (it holds the median half the
# time). The console says so, with the time_cap that would give 6
# samples, instead of "the CI did not reach the target".
"$DLBENCH" --suite "$SUITES/console.ini" --out few --set testload.clock=synthetic \
    --set testload.work=2000000 --set time_cap=0.003s >few.txt 2>&1
ok "few samples: exit status 0" [ $? -eq 0 ]
ok "... a note says how sure 2 samples are, and the time_cap for 6" \
    grep -q "only 2 samples before time_cap: their range holds the median with 50% confidence, not 95%.*a time_cap of 0.012 s" few.txt
ok "... on every row ($(grep -c 'only 2 samples' few.txt) of 4)" [ "$(grep -c 'only 2 samples' few.txt)" -eq 4 ]
ok "... not the note about the target" sh -c "! grep -q 'did not reach the target' few.txt"
# Two samples a row: no rank test can show a difference, though the
# ranges (exact on this clock) miss each other. The verdict says so, as
# the winner's tie rule does, rather than "pays off" beside a tie.
ok "... the verdicts say why they cannot tell" \
    grep -q "8.00x (8.00-8.00), memory .*: no measurable effect (too few samples to tell: the U test does not show a difference (p = .* over 2 and 2 samples), though the speedup's interval is above 1)" few.txt
ok "... and the winner is the baseline, tied" grep -q "winner: .*samples_per_step=1 (the baseline: no setting beats it)" few.txt
finish
