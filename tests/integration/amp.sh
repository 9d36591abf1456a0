#!/bin/sh
# suites/amp.ini in its --quick form: the run succeeds, fp32 and bf16 (where
# the backend can) produce throughput, accuracy, the scaler's figures and
# the cast time; the bf16 row carries its speedup and accuracy drop
# against fp32 in results.json and in the printed "vs baseline" table
# where the backend computes bf16 (else the row is skipped with the
# reason); fp16, which the cpu backend does not compute, is skipped with
# a reason true of this CPU and library, never run in fp32. Also: bad settings are refused
# at suite load with the file and line, and plugin-help lists every
# parameter.
. "${top_srcdir:-.}/tests/integration/lib.sh"

"$DLBENCH" --suite "$top_srcdir/suites/amp.ini" --quick --out run >out.txt 2>err.txt
rc=$?
ok "quick amp run succeeds (rc $rc)" [ "$rc" -eq 0 ]
ok "results.json written" [ -s run/results.json ]
ok "results.csv written" [ -s run/results.csv ]

base='model=lenet batch=64 amp.precision=fp32 amp.loss_scale=none'
bf16='model=lenet batch=64 amp.precision=bf16 amp.loss_scale=none'
fp16='model=lenet batch=64 amp.precision=fp16 amp.loss_scale=dynamic'
ok "fp32 row ok" [ "$(status_of run/results.json "$base")" = ok ]
rec() { json run/results.json "[r for r in d['records'] if r['id']=='$1'][0]$2"; }
ok "fp32 has accuracy" python3 -c "import sys; assert float(sys.argv[1]) > 10" \
    "$(rec "$base" "['metrics']['accuracy']['value']")"
ok "scaler figures recorded" [ "$(rec "$base" "['metrics']['amp.skipped_steps']['value']")" = 0.0 ]
ok "final scale recorded" [ "$(rec "$base" "['metrics']['amp.final_scale']['value']")" = 1.0 ]

# What the cpu backend can compute in, from the backend itself: the
# instruction set its kernels use (the fp32 row's device.arch, oneDNN's
# effective ISA), not /proc/cpuinfo, which can list what oneDNN does not
# use (DNNL_MAX_CPU_ISA, an older oneDNN on a newer CPU).
arch=$(rec "$base" "['device']['arch']")
case $arch in
avx512_core_bf16 | avx512_core_fp16 | avx512_core_amx) has_bf16=1 ;;
*) has_bf16=0 ;;
esac
echo "cpu backend instruction set: $arch" >&2
if [ "$has_bf16" -eq 1 ]; then
    ok "bf16 row ok" [ "$(status_of run/results.json "$bf16")" = ok ]
    ok "bf16 cast time recorded" python3 -c "import sys; assert float(sys.argv[1]) > 0" \
        "$(rec "$bf16" "['metrics']['cast_time_s']['value']")"
    ok "bf16 speedup recorded" python3 -c "import sys; assert float(sys.argv[1]) > 0" \
        "$(rec "$bf16" "['vs_baseline']['speedup']")"
    ok "bf16 accuracy drop recorded" python3 -c "import sys; float(sys.argv[1])" \
        "$(rec "$bf16" "['vs_baseline']['accuracy_drop']")"
    ok "baseline named" [ "$(rec "$bf16" "['vs_baseline']['baseline_id']")" = "$base" ]
    ok "vs baseline table printed" grep -q "^vs baseline" out.txt
    ok "bf16 row in it" grep -q "^$bf16 " out.txt
else
    ok "bf16 skipped on $arch" [ "$(status_of run/results.json "$bf16")" = skipped ]
    ok "bf16 skip names the reason" python3 -c "import sys; assert 'AVX512_BF16' in sys.argv[1], sys.argv[1]" \
        "$(rec "$bf16" "['reason']")"
fi
# The cpu backend has no fp16 operations on any CPU; the reason says
# truly which of the CPU and the library lacks fp16.
ok "fp16 skipped on the cpu backend" [ "$(status_of run/results.json "$fp16")" = skipped ]
if grep -q avx512_fp16 /proc/cpuinfo 2>/dev/null; then
    want="this CPU has AVX512_FP16, but the cpu backend has no fp16 operations: oneDNN"
else
    want="this CPU has no AVX512_FP16"
fi
ok "fp16 skip reason is true of this CPU" python3 -c "import sys; assert sys.argv[2] in sys.argv[1], sys.argv[1]" \
    "$(rec "$fp16" "['reason']")" "$want"

# Bad settings: refused at load, naming the file and line.
cat > bad-precision.ini <<'INI'
[suite]
mode = train
[amp]
precision = fp8
INI
"$DLBENCH" --suite bad-precision.ini --out bad1 >/dev/null 2>bad1.txt
ok "unknown precision refused" [ $? -ne 0 ]
ok "... with file and line" grep -q "bad-precision.ini:4" bad1.txt
cat > bad-scale.ini <<'INI'
[suite]
mode = train
[amp]
loss_scale = static
init_scale = 0
INI
"$DLBENCH" --suite bad-scale.ini --out bad2 >/dev/null 2>bad2.txt
ok "scale 0 refused" [ $? -ne 0 ]
ok "... with file and line" grep -q "bad-scale.ini:5" bad2.txt

"$DLBENCH" plugin-help amp >help.txt 2>&1
for p in precision loss_scale init_scale growth_factor backoff_factor \
         growth_interval master_weights; do
    ok "plugin-help lists $p" grep -q "$p" help.txt
done
finish
