#!/bin/sh
# suites/distill.ini in its --quick form (LeNet distilled from a LeNet
# teacher of 50 reference steps, 30 steps): the run succeeds; every row
# has its accuracy; the distilled rows carry the teacher's accuracy, both
# models' size and inference throughput at batch 256, the plugin's step
# time and the cache's figures, and their speedup and accuracy change
# against the student trained alone; the cache on and off train the same
# student (equal accuracy). ResNet-8 distils from a ResNet-20 teacher.
# Bad settings are refused at suite load with
# the file and line (exit 2); so is an unknown teacher, at its line;
# plugin-help lists every parameter.
. "${top_srcdir:-.}/tests/integration/lib.sh"

"$DLBENCH" --suite "$top_srcdir/suites/distill.ini" --quick --out run >out.txt 2>err.txt
rc=$?
ok "quick distill run succeeds (rc $rc)" [ "$rc" -eq 0 ]
ok "results.json written" [ -s run/results.json ]

base='distill.enable=off distill.temperature=4 distill.alpha=0.9 distill.teacher_cache=on'
on='distill.enable=on distill.temperature=4 distill.alpha=0.9 distill.teacher_cache=on'
off='distill.enable=on distill.temperature=4 distill.alpha=0.9 distill.teacher_cache=off'
rec() { json run/results.json "[r for r in d['records'] if r['id']=='$1'][0]$2"; }
fig() { rec "$1" "['metrics']['$2']['value']"; }
positive() { python3 -c "import sys; assert float(sys.argv[1]) > 0, sys.argv[1]" "$1"; }

for id in "$base" "$on" "$off"; do
    ok "$id: ok" [ "$(status_of run/results.json "$id")" = ok ]
    ok "$id: accuracy" positive "$(fig "$id" accuracy)"
done
for id in "$on" "$off"; do
    for f in teacher_accuracy teacher_params student_params teacher_infer_ips \
             student_infer_ips infer_speedup step_s steps setup_s; do
        ok "$id: distill.$f" positive "$(fig "$id" "distill.$f")"
    done
    ok "$id: speedup vs the student alone" positive "$(rec "$id" "['vs_baseline']['speedup']")"
    ok "$id: accuracy change vs the student alone" \
        python3 -c "import sys; float(sys.argv[1])" "$(rec "$id" "['vs_baseline']['accuracy_drop']")"
    ok "$id: baseline is the student alone" [ "$(rec "$id" "['vs_baseline']['baseline_id']")" = "$base" ]
done
ok "cache: every lookup hits (augment off)" [ "$(fig "$on" distill.cache_hit_rate)" = 100.0 ]
ok "cache: its size recorded" positive "$(fig "$on" distill.cache_bytes)"
ok "cache on and off: same student" [ "$(fig "$on" accuracy)" = "$(fig "$off" accuracy)" ]
ok "vs baseline table printed" grep -q "^vs baseline" out.txt

# A residual pair: ResNet-8 distilled from ResNet-20 (10 reference steps,
# its logits at every step; no baseline row: the sweep keeps only cache
# off), the 32x32 networks on Fashion-MNIST padded.
# A cache of its own, so that the teacher's weights are trained here: the
# plugin prepares them from init, and the workload trains them before it
# opens its backend, in a process of their own; its first step would
# train them among that backend's threads, more slowly.
DLBENCH_CACHE_DIR=$T/rcache "$DLBENCH" --suite "$top_srcdir/suites/distill.ini" --quick --set model=resnet8 \
    --set distill.teacher=resnet20 --set distill.teacher_steps=10 \
    --set distill.teacher_cache=off --set baseline= --out res >res.txt 2>res-err.txt
ok "resnet8 from resnet20: run succeeds ($(tail -c 300 res-err.txt))" [ $? -eq 0 ]
ok "resnet8 from resnet20: the teacher's weights trained before the backend opened, apart" \
    grep -q '^core: info: training reference weights: 10 steps .* in a process of its own' res/logs/*
ok "... not in the measured process" sh -c "! grep -q 'in this process' res/logs/*"
ok "... and cached where the teacher opened them" [ -s "$T/rcache/weights/resnet20-s42-n10.safetensors" ]
rid='distill.enable=on distill.temperature=4 distill.alpha=0.9 distill.teacher_cache=off'
rfig() { json res/results.json "[r for r in d['records'] if r['id']=='$rid'][0]['metrics']['$1']['value']"; }
ok "resnet8 from resnet20: ok" [ "$(status_of res/results.json "$rid")" = ok ]
ok "resnet8 from resnet20: the teacher is ResNet-20 (272,186 parameters)" \
    [ "$(rfig distill.teacher_params)" = 272186.0 ]
ok "resnet8 from resnet20: the student is ResNet-8 (77,754 parameters)" \
    [ "$(rfig distill.student_params)" = 77754.0 ]
ok "resnet8 from resnet20: its accuracy" positive "$(rfig accuracy)"
ok "resnet8 from resnet20: the teacher's accuracy" \
    positive "$(rfig distill.teacher_accuracy)"

# Bad settings: refused at load with the file and line, exit status 2.
bad() { # NAME KEY VALUE
    printf '[suite]\nmode = train\n[distill]\n%s = %s\n' "$2" "$3" >"$1.ini"
    "$DLBENCH" --suite "$1.ini" --out "o-$1" >/dev/null 2>"$1.txt"
    ok "$2 = $3 refused (exit 2)" [ $? -eq 2 ]
    ok "... with file and line" grep -q "$1.ini:4" "$1.txt"
}
bad t0 temperature 0
bad tneg temperature -1
bad a15 alpha 1.5
bad aneg alpha -0.1

# An unknown teacher: refused when the suite is loaded, at the line that
# names it (exit 2), before a run directory exists.
cat > noteacher.ini <<'INI'
[suite]
mode = train
train_steps = 2
warmup = 0.05s
time_cap = 0.2s
min_samples = 2
[distill]
teacher = no-such-net
INI
"$DLBENCH" --suite noteacher.ini --out nt >/dev/null 2>nt.txt
ok "unknown teacher: refused at load (exit 2)" [ $? -eq 2 ]
ok "... at the teacher's line, naming it ($(head -c 300 nt.txt))" \
    grep -q "noteacher.ini:8: plugin distill: .*teacher 'no-such-net'" nt.txt
ok "... before anything ran" [ ! -e nt ]

"$DLBENCH" plugin-help distill >help.txt 2>&1
for p in teacher temperature alpha teacher_cache teacher_steps; do
    ok "plugin-help lists $p" grep -q "$p" help.txt
done
finish
