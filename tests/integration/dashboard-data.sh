# Sourced by the dashboard tests: a store of 60 crafted nights of the ok
# suite on two machines (tests/integration/craft-nights.py), a 10% step on
# ci-1 alone in one configuration from night 30 on, confirmed by a
# further night so that its alert is raised, and one run of a suite whose
# name is HTML. Sets STEP_RANGE to the step's commits ("good..bad").
CRAFT="$top_srcdir/tests/integration/craft-nights.py"
A='testload.work=10000 testload.samples_per_step=1'
"$DLBENCH" --suite "$SUITES/ok.ini" --set testload.clock=synthetic --out base >/dev/null 2>&1 ||
    { echo "the base run failed" >&2; exit 99; }
python3 "$CRAFT" base ci-1 61 --host ci-1 --seed 1 --at 30 --step 0.10 --config "$A" >/dev/null
python3 "$CRAFT" base ci-2 60 --host ci-2 --seed 2 >/dev/null
for i in $(seq 0 59); do n=$(printf %03d "$i"); set -- "$@" "ci-1/night-$n" "ci-2/night-$n"; done
"$DLBENCH" store add s.db "$@" >/dev/null 2>&1 || { echo "store add failed" >&2; exit 99; }
"$DLBENCH" changes s.db >/dev/null 2>&1
"$DLBENCH" store add s.db ci-1/night-060 >/dev/null 2>&1
"$DLBENCH" changes s.db >/dev/null 2>&1
mkdir -p evil
python3 -c '
import json, sys
d = json.load(open("base/results.json"))
d["context"]["suite"]["name"] = "<b>evil</b> & \"co\""
d["context"]["run_dir"] = "evil"
json.dump(d, open("evil/results.json", "w"))'
"$DLBENCH" store add s.db evil --machine ci-2 >/dev/null 2>&1
commit_of() {
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["context"]["dlbench"]["git_commit"])' "$1"
}
STEP_RANGE="$(commit_of ci-1/night-029/results.json)..$(commit_of ci-1/night-030/results.json)"
