#!/bin/sh
# suites/quant.ini in its --quick form (LeNet at batch 256, fp32 and four
# int8 configurations): the run succeeds; on a CPU with VNNI every int8
# row is ok and carries the plugin's figures (accuracy before and after,
# model size and ratio, calibration time, an SQNR per int8 layer), its
# accuracy within 2 points of fp32 (the quick run calibrates on 128
# images and scores 2,000: a 1-point drop is the full suite's bar, and
# 2,000 images put a 0.5-point noise on each figure), a model at most
# 0.3 of fp32's size, and a speedup against fp32 in results.json; without
# VNNI the int8 rows are skipped with the backend's reason, never run in
# fp32. measure_only (halving's screening) skips the plugin's quality
# figures but still quantises. ResNet-20 (--set model=resnet20): every
# conv in int8 through its residual adds, accuracy within 2 points of
# fp32 (below). Also: bad settings are refused at suite load with the file and
# line and exit status 2, and plugin-help lists every parameter.
. "${top_srcdir:-.}/tests/integration/lib.sh"

"$DLBENCH" --suite "$top_srcdir/suites/quant.ini" --quick --out run >out.txt 2>err.txt
rc=$?
ok "quick quant run succeeds (rc $rc)" [ "$rc" -eq 0 ]
ok "results.json written" [ -s run/results.json ]

base='model=lenet batch=256 quant.enable=off quant.calibrator=minmax quant.weights=per_tensor'
rec() { json run/results.json "[r for r in d['records'] if r['id']=='$1'][0]$2"; }
metric() { rec "$1" "['metrics']['$2']['value']"; }
ok "fp32 row ok" [ "$(status_of run/results.json "$base")" = ok ]
ok "fp32 has accuracy" python3 -c "import sys; assert float(sys.argv[1]) > 10" \
    "$(metric "$base" accuracy)"

# Whether the cpu backend has int8 kernels, from the backend itself: the
# instruction set its kernels use (the fp32 row's device.arch, oneDNN's
# effective ISA), not /proc/cpuinfo, which can list what oneDNN does not
# use.
arch=$(rec "$base" "['device']['arch']")
case $arch in
avx512_core_vnni | avx512_core_bf16 | avx512_core_fp16 | avx512_core_amx | avx2_vnni) vnni=1 ;;
*) vnni=0 ;;
esac
echo "cpu backend instruction set: $arch" >&2
for cal in minmax entropy; do
    for w in per_tensor per_channel; do
        id="model=lenet batch=256 quant.enable=on quant.calibrator=$cal quant.weights=$w"
        st=$(status_of run/results.json "$id")
        if [ "$vnni" -eq 0 ]; then
            ok "$cal/$w skipped without VNNI ($st)" [ "$st" = skipped ]
            ok "$cal/$w skip says why" python3 -c "import sys; assert 'int8' in sys.argv[1], sys.argv[1]" \
                "$(rec "$id" "['reason']")"
            continue
        fi
        ok "$cal/$w ok ($st)" [ "$st" = ok ]
        for m in accuracy_fp32 accuracy_int8 accuracy_drop model_bytes_fp32 \
                 model_bytes_int8 size_ratio calib_time_s calib_images \
                 int8_layers sqnr_conv1 sqnr_conv2 sqnr_fc1 sqnr_fc2; do
            ok "$cal/$w records quant.$m" python3 -c "import sys; float(sys.argv[1])" \
                "$(metric "$id" "quant.$m")"
        done
        ok "$cal/$w: int8 accuracy within 2 points of fp32" python3 -c \
            "import sys; a, b = map(float, sys.argv[1:]); assert abs(a - b) <= 2, (a, b)" \
            "$(metric "$id" quant.accuracy_int8)" "$(metric "$id" quant.accuracy_fp32)"
        ok "$cal/$w: the plugin's int8 accuracy is the configuration's" python3 -c \
            "import sys; a, b = map(float, sys.argv[1:]); assert a == b, (a, b)" \
            "$(metric "$id" quant.accuracy_int8)" "$(metric "$id" accuracy)"
        ok "$cal/$w: drop against the fp32 row within 2 points" python3 -c \
            "import sys; assert abs(float(sys.argv[1])) <= 2, sys.argv[1]" \
            "$(rec "$id" "['vs_baseline']['accuracy_drop']")"
        ok "$cal/$w: size at most 0.3 of fp32" python3 -c \
            "import sys; assert 0 < float(sys.argv[1]) <= 0.3, sys.argv[1]" \
            "$(metric "$id" quant.size_ratio)"
        ok "$cal/$w: every layer in int8, data int8 between them" python3 -c \
            "import sys; assert sys.argv[1:] == ['4.0', '3.0'], sys.argv[1:]" \
            "$(metric "$id" quant.int8_layers)" "$(metric "$id" quant.int8_outputs)"
        ok "$cal/$w: SQNR above 20 dB" python3 -c \
            "import sys; assert float(sys.argv[1]) > 20, sys.argv[1]" \
            "$(metric "$id" quant.sqnr_conv2)"
        ok "$cal/$w: speedup recorded" python3 -c "import sys; assert float(sys.argv[1]) > 0" \
            "$(rec "$id" "['vs_baseline']['speedup']")"
        # Its share of peak is of an int8 unit the probe measured (AMX's
        # tiles or VNNI), not of the fp32 FMAs: an int8 vgg-small step read
        # 450% of those. The fp32 row's is of fp32's.
        ok "$cal/$w: share of peak of an int8 unit, the fp32 row's of fp32" python3 -c "
import json, sys
d = json.load(open('run/results.json'))
fig = (d['context'].get('peak') or {}).get('figures') or {}
units = {u: (fig.get(u) or {}).get('isa') for u in ('fp32', 'vnni', 'amx_int8')}
rec = {r['id']: r for r in d['records']}
q, b = rec[sys.argv[1]], rec[sys.argv[2]]
if 'peak_share' in q['metrics']:
    assert q['measure']['peak_unit'] in (units['vnni'], units['amx_int8']), (q['measure'], units)
    assert q['measure']['peak_unit'] != units['fp32'], q['measure']
    assert 0 < q['metrics']['peak_share']['value'] <= 100, q['metrics']['peak_share']
if 'peak_share' in b['metrics']:
    assert b['measure']['peak_unit'] == units['fp32'], (b['measure'], units)
" "$id" "$base"
    done
done

# Halving's screening (measure_only): still calibrated and in int8, but
# the plugin's two accuracy evaluations and SQNR pass are skipped; with
# screen_accuracy (an inference screening) the configuration's own
# accuracy is still evaluated, and equals the full run's.
if [ "$vnni" -eq 1 ]; then
    id="model=lenet batch=256 quant.enable=on quant.calibrator=minmax quant.weights=per_tensor"
    for mode in mo sa; do
        extra=
        [ "$mode" = sa ] && extra="--set screen_accuracy=on"
        # shellcheck disable=SC2086
        "$DLBENCH" --suite "$top_srcdir/suites/quant.ini" --quick \
            --set quant.calibrator=minmax --set quant.weights=per_tensor \
            --set measure_only=on $extra --out "run-$mode" >/dev/null 2>"$mode.err"
        ok "$mode: measure_only run succeeds" [ $? -eq 0 ]
        m=$(json "run-$mode/results.json" \
            "sorted([r for r in d['records'] if r['id'] == '$id'][0]['metrics'])")
        ok "$mode: calibrated and in int8" python3 -c "
import sys; m = sys.argv[1]; assert 'quant.calib_time_s' in m and 'quant.int8_layers' in m, m" "$m"
        ok "$mode: no plugin accuracy, no SQNR" python3 -c "
import sys; m = sys.argv[1]; assert 'quant.accuracy' not in m and 'quant.sqnr' not in m, m" "$m"
        ok "$mode: the skip is logged" grep -q "accuracy evaluations and the SQNR pass skipped" \
            run-$mode/logs/*.log
    done
    ok "mo: no accuracy" [ "$(json run-mo/results.json \
        "'accuracy' in [r for r in d['records'] if r['id'] == '$id'][0]['metrics']")" = False ]
    ok "sa: the configuration's accuracy, as in the full run" [ "$(json run-sa/results.json \
        "[r for r in d['records'] if r['id'] == '$id'][0]['metrics']['accuracy']['value']")" = \
        "$(metric "$id" accuracy)" ]
fi

# Bad settings: refused at load, naming the file and line, exit 2.
bad() { # NAME LINE PHRASE, the suite on stdin
    cat >"$1.ini"
    "$DLBENCH" --suite "$1.ini" --out "run-$1" >/dev/null 2>"$1.err"
    rc=$?
    ok "$1: exit 2 (got $rc)" [ "$rc" -eq 2 ]
    ok "$1: names $1.ini:$2 ($(cat "$1.err"))" grep -q "$1.ini:$2" "$1.err"
    ok "$1: says '$3'" grep -q -- "$3" "$1.err"
    ok "$1: no run directory" [ ! -e "run-$1" ]
}
bad unknown-calibrator 4 "expected one of minmax, moving_minmax, percentile, entropy" <<'INI'
[suite]
mode = infer
[quant]
calibrator = kl_divergence
INI
bad percentile-zero 4 "> 0 and <= 1" <<'INI'
[suite]
mode = infer
[quant]
percentile = 0
INI
bad percentile-above 5 "> 0 and <= 1" <<'INI'
[suite]
mode = infer
[sweep]
quant.enable = off, on
quant.percentile = 99.9, 100.01
INI
# Activations have one scale per tensor (oneDNN's int8 source scale):
# per-channel activations cannot be.
bad per-channel-activations 4 "expected one of u8, s8" <<'INI'
[suite]
mode = infer
[quant]
activations = per_channel
INI

# ResNet-20 (residual adds, 1x1 projection shortcuts) at 32x32, weights
# from the quick run's short training, minmax calibration on 128 padded
# training images: every conv and the classifier run in int8 (22 layers,
# 21 batch norms folded), the adds in fp32 between them. The int8
# accuracy is within 2 points of fp32 on the 2,000 test images: measured
# 1.2 (per tensor) and 0.75 (per channel) points at ~59% fp32 accuracy;
# 2 points is 40 images whose prediction flips, while an add fed with a
# wrongly scaled input drops the accuracy to chance.
# The suite's baseline names no model, so --set model=... keeps it.
"$DLBENCH" --suite "$top_srcdir/suites/quant.ini" --quick --set model=resnet20 \
    --set quant.calibrator=minmax --out rn >rn.out 2>rn.err
ok "resnet20 quick quant run succeeds" [ $? -eq 0 ]
for w in per_tensor per_channel; do
    id="model=resnet20 batch=256 quant.enable=on quant.calibrator=minmax quant.weights=$w"
    st=$(json rn/results.json "[r for r in d['records'] if r['id']=='$id'][0]['status']")
    if [ "$vnni" -eq 0 ]; then
        ok "resnet20 $w skipped without VNNI ($st)" [ "$st" = skipped ]
        continue
    fi
    rm_() { json rn/results.json "[r for r in d['records'] if r['id']=='$id'][0]['metrics']['quant.$1']['value']"; }
    ok "resnet20 $w ok ($st)" [ "$st" = ok ]
    ok "resnet20 $w: 22 int8 layers, 21 folded batch norms" python3 -c \
        "import sys; assert sys.argv[1:] == ['22.0', '21.0'], sys.argv[1:]" \
        "$(rm_ int8_layers)" "$(rm_ folded_batchnorms)"
    ok "resnet20 $w: int8 accuracy within 2 points of fp32" python3 -c \
        "import sys; a, b = map(float, sys.argv[1:]); assert b > 30 and abs(a - b) <= 2, (a, b)" \
        "$(rm_ accuracy_int8)" "$(rm_ accuracy_fp32)"
    ok "resnet20 $w: size at most 0.3 of fp32" python3 -c \
        "import sys; assert 0 < float(sys.argv[1]) <= 0.3, sys.argv[1]" \
        "$(rm_ size_ratio)"
done

"$DLBENCH" plugin-help quant >help.txt 2>&1
for p in weights activations calibrator percentile calib_images calib_batch \
         averaging; do
    ok "plugin-help lists $p" grep -q "^$p " help.txt
done
finish
