#!/bin/sh
# What a run writes is never writable by other users, whatever the umask;
# a suite's name cannot place the run directory outside results/; no suite
# string reaches a shell; plugins come only from the plugin search path,
# never from the current directory; a suite cannot name a launcher (a
# program to run).
. "${top_srcdir:-.}/tests/integration/lib.sh"

# A permissive umask: still nothing world-writable in the run.
(umask 000 && "$DLBENCH" --suite "$SUITES/ok.ini" --out run >/dev/null 2>run.err)
ok "runs under umask 000" [ -f run/results.json ]
ok "nothing world-writable in the run directory ($(find run -perm -o+w ! -type l | head -3))" \
    [ -z "$(find run -perm -o+w ! -type l)" ]

# A hostile suite name: the default run directory stays under ./results,
# and nothing in the name runs.
mkdir w
cat >w/evil.ini <<EOF2
[suite]
name = ../../escape/\$(touch pwned)\`touch pwned2\`;touch pwned3
workload = testload
warmup = 0.01s
time_cap = 0.05s

[sweep]
testload.work = 1000, 2000
EOF2
(cd w && "$DLBENCH" --suite evil.ini >/dev/null 2>evil.err)
ok "the hostile suite runs" [ $? -eq 0 ]
ok "its run directory is under results/ ($(ls w/results))" \
    [ "$(find w/results -name results.json | wc -l)" -eq 1 ]
ok "nothing escaped results/" [ ! -e escape ] && [ ! -e w/escape ]
for f in pwned pwned2 pwned3; do
    ok "nothing executed: no $f" [ -z "$(find "$T" -name "$f")" ]
done

# A planted testload.so in the current directory, and an empty entry in
# $DLBENCH_PLUGIN_PATH (which a shell would read as "."): not loaded.
mkdir plant
printf 'junk\n' >plant/testload.so
(cd plant && DLBENCH_PLUGIN_PATH=":$DLB_TEST_PLUGIN_DIR:" "$DLBENCH" --suite "$SUITES/ok.ini" \
    --out ../run-plant >/dev/null 2>../plant.err)
ok "the planted plugin is not loaded ($(tail -1 plant.err))" [ -f run-plant/results.json ]

# A suite that names a program to run as its launcher: refused at load
# (exit 2), before anything starts, and nothing it names runs.
cat >w/launch.ini <<EOF2
[suite]
workload = testload
warmup = 0.01s
time_cap = 0.05s
launcher = sh -c "touch $T/pwned4" {ranks}
EOF2
"$DLBENCH" --suite w/launch.ini --out run-launch >/dev/null 2>launch.err
ok "a suite's launcher key is refused (exit 2)" [ $? -eq 2 ]
ok "... at its line ($(head -c 200 launch.err))" grep -q "launch.ini:5: .*launcher" launch.err
ok "... and nothing ran: no pwned4, no run directory" \
    [ ! -e "$T/pwned4" ] && [ ! -e run-launch ]
finish
