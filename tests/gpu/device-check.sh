#!/bin/sh
# The GPU checks in one call, for a machine with a GPU (see doc/gpu.md):
# the cuda backend op by op against ref, the 32x32 ResNet and MobileNet
# and an ONNX model trained on it, LeNet training against cpu, the
# mempool over cudaMalloc (its alloc+free pair against cudaMalloc+cudaFree),
# the gradient scaler on the device against ref, pinned batches uploaded
# on the copy stream against the pageable path (dataloader.pinned), the
# suites in --quick form on --backend cuda (quant and prune among them:
# the int8 and CSR layers), training throughput of LeNet
# and vgg-small per precision at batch 256 and 1024 (cuDNN heuristic and
# search), and the same training in PyTorch eager as a ratio. Logs go to
# $OUT (default ./device-check-out); a table is printed last.
#
# The GPU machine has nvcc and PyTorch but no autotools and none of the
# -dev packages dlbench builds against, so the tree is built on the build
# machine and travels as a bundle:
#
#   tests/gpu/device-check.sh --prepare [BUNDLE]
#       on the build machine, in a configured CUDA build directory (or with
#       DLB_BUILD set to one): builds what the checks need and copies the
#       binaries, the cuda module, the plugins and the shared libraries that
#       a machine without the -dev packages lacks (inih, jansson, oneDNN,
#       libgomp) into BUNDLE (default ./gpu-bundle, about 50 MB);
#   tests/gpu/device-check.sh [BUNDLE]
#       on the GPU machine, from the source tree's root.
#
# The CUDA libraries come from the machine: the pip packages' nvidia/*/lib
# folders and the toolkit. When the bundle's binaries cannot run there
# (another glibc), the script falls back to a plain nvcc/gcc build of the
# module and of the op-by-op test, which need no library but CUDA's: the
# per-operation errors still come back; the training, suite and throughput
# checks are then reported as not run.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)

# ---- --prepare: on the build machine ---------------------------------------
if [ "${1:-}" = "--prepare" ]; then
    BUNDLE=$(mkdir -p "${2:-gpu-bundle}" && cd "${2:-gpu-bundle}" && pwd)
    B=${DLB_BUILD:-.}
    (cd "$B" && { make -j"$(nproc)" all >/dev/null 2>&1 ||
        make -j"$(nproc)" dlbench core/backend/cuda/dlbench_cuda.la; } &&
        make -j"$(nproc)" tests/gpu/test_cuda_ops tests/gpu/test_cuda_train \
        tests/gpu/test_cuda_mempool tests/gpu/test_cuda_scaler \
        tests/gpu/test_cuda_graph tests/gpu/test_cuda_upload >/dev/null) || {
        echo "device-check: building in $B failed (a configured CUDA build?)" >&2
        exit 1
    }
    mkdir -p "$BUNDLE/bin" "$BUNDLE/backends" "$BUNDLE/plugins" "$BUNDLE/lib"
    cp "$B/dlbench" "$B/tests/gpu/test_cuda_ops" "$B/tests/gpu/test_cuda_train" \
        "$B/tests/gpu/test_cuda_mempool" "$B/tests/gpu/test_cuda_scaler" \
        "$B/tests/gpu/test_cuda_graph" "$B/tests/gpu/test_cuda_upload" \
        "$BUNDLE/bin/" &&
    cp "$B/core/backend/cuda/.libs/dlbench_cuda.so" "$BUNDLE/backends/" || exit 1
    cp "$B"/plugins/.libs/*.so "$BUNDLE/plugins/" 2>/dev/null
    # mp's engine nccl: a module beside mp.so, which mp looks for in mp/.
    mkdir -p "$BUNDLE/plugins/mp"
    cp "$B"/plugins/mp/.libs/mp_nccl.so "$BUNDLE/plugins/mp/" 2>/dev/null
    # Every library the binaries and modules need that is neither glibc's,
    # the compiler runtime's nor CUDA's (those the GPU machine has): inih,
    # jansson, oneDNN and its OpenCL loader, libgomp, Open MPI for dp and mp.
    for f in "$BUNDLE"/bin/* "$BUNDLE"/backends/*.so "$BUNDLE"/plugins/*.so \
             "$BUNDLE"/plugins/mp/*.so; do
        ldd "$f" 2>/dev/null | awk '/=> \//{print $3}'
    done | sort -u | while read -r lib; do
        case $lib in
        /usr/local/cuda*) continue ;;
        esac
        case $(basename "$lib") in
        libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libstdc++*|\
        libgcc_s*|ld-linux*) ;;
        *) cp -L "$lib" "$BUNDLE/lib/" ;;
        esac
    done
    du -sh "$BUNDLE"
    exit 0
fi

# ---- on the GPU machine ----------------------------------------------------
BUNDLE=$(cd "${1:-gpu-bundle}" 2>/dev/null && pwd || echo "")
OUT=${OUT:-$PWD/device-check-out}
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"

# The CUDA libraries: PyTorch's pip packages, then the toolkit.
nvlibs=$(python3 - <<'EOF' 2>/dev/null
import glob, os, site
dirs = site.getsitepackages() + [site.getusersitepackages()]
print(":".join(sorted({d for p in dirs for d in glob.glob(os.path.join(p, "nvidia", "*", "lib"))})))
EOF
)
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
CUDA_TK=$(dirname "$(dirname "$NVCC")")
LD_LIBRARY_PATH="${BUNDLE:+$BUNDLE/lib:}${nvlibs:+$nvlibs:}$CUDA_TK/lib64:${LD_LIBRARY_PATH:-}"
export LD_LIBRARY_PATH

# record NAME STATUS SECONDS NOTE
record() {
    printf '%s|%s|%s|%s\n' "$1" "$2" "$3" "$4" >>"$SUMMARY"
}

# The whole script's time: a lent machine's minutes are few, so the checks
# run in order of value, each limited to what is left, and those that no
# longer fit are reported as not run rather than cut off the call.
BUDGET=${DEVICE_CHECK_BUDGET:-540}
T_START=$(date +%s)

# check NAME TIMEOUT COMMAND...: run with a time limit, log to $OUT/NAME.log
check() {
    name=$1 limit=$2
    shift 2
    left=$((BUDGET - ($(date +%s) - T_START)))
    if [ "$left" -lt 15 ]; then
        record "$name" "NOT RUN" 0 "out of the script's ${BUDGET}s"
        return 0
    fi
    [ "$limit" -gt "$left" ] && limit=$left
    t0=$(date +%s)
    timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
    rc=$?
    t=$(($(date +%s) - t0))
    case $rc in
    0) st=PASS ;; 77) st=SKIP ;; 124) st=TIMEOUT ;; *) st="FAIL($rc)" ;;
    esac
    record "$name" "$st" "$t" "$(grep -c '^ok ' "$OUT/$name.log") ok lines"
    echo "device-check: $name: $st in ${t}s" >&2
    return $rc
}

{
    nvidia-smi -L 2>&1 || echo "nvidia-smi: not found"
    "$NVCC" --version 2>&1 | tail -n 2
    python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)' 2>&1
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    # the CPU side: the cpu backend's thread count follows these
    echo "nproc $(nproc); $(grep -m1 'model name' /proc/cpuinfo)"
    echo "cgroup: $(tr '\n' ' ' </proc/self/cgroup)"
    for f in /sys/fs/cgroup/cpu.max /sys/fs/cgroup/cpu/cpu.cfs_quota_us; do
        [ -r "$f" ] && echo "$f: $(cat "$f")"
    done
} >"$OUT/environment.txt"

# Does the bundle run here?
mode=bundle
if [ -z "$BUNDLE" ] || ! "$BUNDLE/bin/dlbench" --version >"$OUT/bundle.log" 2>&1; then
    mode=plain
    echo "device-check: the bundle does not run here ($(tail -n 1 "$OUT/bundle.log" 2>/dev/null)); plain build" >&2
fi

if [ $mode = plain ]; then
    P=$OUT/plain
    mkdir -p "$P"
    inc=""
    for d in $(echo "$nvlibs" | tr ':' ' '); do
        [ -d "$d/../include" ] && inc="$inc -isystem $d/../include"
    done
    inc="$inc -isystem $CUDA_TK/include"
    libdirs=""
    for d in $(echo "$nvlibs" | tr ':' ' ') "$CUDA_TK/lib64"; do
        libdirs="$libdirs -L$d"
    done
    soname() { # the first lib$1.so* in the library dirs, for -l:
        for d in $(echo "$nvlibs" | tr ':' ' ') "$CUDA_TK/lib64"; do
            f=$(ls "$d"/lib"$1".so* 2>/dev/null | head -n 1)
            [ -n "$f" ] && { basename "$f"; return; }
        done
        echo "lib$1.so"
    }
    (
        set -x
        # every .cu of the module, so that a new kernel file needs no edit here
        for f in "$SRC"/core/backend/cuda/*.cu; do
            cu=$(basename "$f" .cu)
            "$NVCC" -gencode arch=compute_90,code=sm_90 -O2 -std=c++17 \
                -Xcompiler -fPIC -I"$SRC/include" -I"$SRC/core/backend/cuda" \
                -c "$f" -o "$P/$cu.o" || exit 1
        done
        # shellcheck disable=SC2086
        gcc -std=c11 -O2 -fPIC -shared -D_GNU_SOURCE -I"$SRC/include" \
            -I"$SRC/core" $inc "$SRC"/core/backend/cuda/*.c \
            "$SRC/core/backend/dtype.c" "$P"/*.o \
            -o "$P/dlbench_cuda.so" $libdirs -l:"$(soname cudnn)" \
            -l:"$(soname cublasLt)" -l:"$(soname cusparse)" \
            -l:"$(soname nccl)" -l:"$(soname cudart)" \
            -lstdc++ -ldl || exit 1
        gcc -std=c11 -O2 -D_GNU_SOURCE -DDLB_PKGLIBDIR='"/nonexistent"' \
            -I"$SRC/include" -I"$SRC/core" -I"$SRC/tests/unit" \
            "$SRC"/core/backend/*.c "$SRC"/core/backend/ref/*.c "$SRC/core/util/rng.c" \
            "$SRC/tests/gpu/test_cuda_ops.c" -o "$P/test_cuda_ops" -ldl -lm || exit 1
    ) >"$OUT/plain-build.log" 2>&1
    if [ $? -ne 0 ]; then
        record plain-build FAIL 0 "see plain-build.log"
    else
        record plain-build PASS 0 ""
        DLBENCH_BACKEND_PATH=$P check ops 600 "$P/test_cuda_ops"
    fi
    for c in train mempool scaler graph upload list suites perf; do record "$c" "NOT RUN" 0 "bundle does not run here"; done
else
    export DLBENCH="$BUNDLE/bin/dlbench" DLBENCH_BACKEND_PATH="$BUNDLE/backends"
    export DLBENCH_PLUGIN_PATH="$BUNDLE/plugins" DLBENCH_SUITE_PATH="$SRC/suites"
    export DLBENCH_CACHE_DIR="$OUT/cache" top_srcdir="$SRC" srcdir="$SRC"
    export top_builddir="$BUNDLE" # lib.sh reads it; the checks use $DLBENCH
    ldd "$DLBENCH_BACKEND_PATH/dlbench_cuda.so" >"$OUT/ldd-module.txt" 2>&1
    check ops 90 "$BUNDLE/bin/test_cuda_ops"
    # The networks after vgg-small on the device, trained and scored:
    # ResNet-20's adds and projection shortcuts, MobileNetV2-32's grouped
    # (depthwise) convolutions and ReLU6, and an imported ONNX model.
    for n in resnet20 mobilenet-v2-32; do
        check "net-$n" 60 "$DLBENCH" --suite baseline --quick --backend cuda \
            --set model=$n --out "$OUT/net-$n"
    done
    check net-onnx 40 "$DLBENCH" --suite baseline --quick --backend cuda \
        --set model="$SRC/tests/data/onnx/tiny_res.onnx" --out "$OUT/net-onnx"
    check mempool 45 "$BUNDLE/bin/test_cuda_mempool"
    check graph 45 "$BUNDLE/bin/test_cuda_graph"
    # pinned batches on the copy stream: the same batches and losses as
    # the pageable path, and the overlap share
    check upload 45 "$BUNDLE/bin/test_cuda_upload"
    # Throughput: measure only (no accuracy run), two seconds per row, in
    # three settings: cudaMalloc per request with cuDNN's heuristic (the
    # baseline), CUDA's stream-ordered pool, and the pool with the timed
    # algorithm search; then the same training in PyTorch.
    for v in 256:async:heuristic:async 256:search:search:async \
             1024:async:heuristic:async 1024:search:search:async \
             256:malloc:heuristic:cudamalloc; do
        b=${v%%:*} v=${v#*:}
        name=${v%%:*} rest=${v#*:}
        DLBENCH_CUDA_ALLOC=${rest#*:} \
            check "perf-b$b-$name" 60 "$DLBENCH" --suite amp \
            --backend cuda --set batch=$b --set train_steps=0 \
            --set cudnn.algo=${rest%%:*} \
            --set warmup=0.5s --set time_cap=2s --out "$OUT/perf-b$b-$name"
    done
    if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
        check torch 90 python3 "$SRC/tests/gpu/torch_train.py" --seconds 2
        grep '^{' "$OUT/torch.log" >"$OUT/torch.jsonl" 2>/dev/null
    else
        record torch "NOT RUN" 0 "no PyTorch with CUDA"
    fi
    check list 30 sh "$SRC/tests/gpu/cuda-backend.sh"
    # quant and prune: int8 layers and CSR linear layers on the GPU
    for s in baseline infer amp mempool cuda-graphs quant prune; do
        check "suite-$s" 40 "$DLBENCH" --suite "$s" --quick --backend cuda \
            --out "$OUT/suite-$s"
    done
    # The dataloader with pinned = off and on (and on under cuda.graphs):
    # the losses must agree, the h2d_* figures say what the copy cost
    # and how much of it the step hid.
    for p in off on graphs; do
        case $p in
        graphs) set -- --set dataloader.pinned=on --set cuda.graphs=on ;;
        *) set -- --set dataloader.pinned=$p ;;
        esac
        check "suite-dataloader-pinned-$p" 40 "$DLBENCH" --suite dataloader \
            --quick --backend cuda "$@" --out "$OUT/suite-dataloader-pinned-$p"
    done
    # The cpu backend on this machine, which test_cuda_train and
    # test_cuda_scaler compare with. On the first lease (16 vCPUs, no
    # cgroup quota) it ran LeNet at 17 samples/s with its default 16
    # pinned threads, where 2 cores give 20,000: its thread count and
    # libgomp's spinning, one at a time, and the steal time meanwhile.
    grep '^cpu ' /proc/stat >"$OUT/proc-stat-before.txt"
    for v in 1:active 4:active 0:active 0:passive; do
        check "cpu-threads-${v%%:*}-${v#*:}" 25 env OMP_WAIT_POLICY="${v#*:}" \
            "$DLBENCH" --suite baseline --quick --backend cpu \
            --set threads="${v%%:*}" --out "$OUT/cpu-threads-${v%%:*}-${v#*:}"
    done
    grep '^cpu ' /proc/stat >"$OUT/proc-stat-after.txt"
    check train 90 "$BUNDLE/bin/test_cuda_train"
    check scaler 60 "$BUNDLE/bin/test_cuda_scaler"
    # mp's engine nccl runs a stage per GPU: its quick form only where
    # there are two or more (the lent machines have one; it would skip).
    if [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')" -ge 2 ]; then
        check mp-nccl 120 sh "$SRC/tests/gpu/test_mp_nccl.sh"
    else
        record mp-nccl "NOT RUN" 0 "engine nccl needs two GPUs"
    fi
    # With what time is left: the op-by-op test under compute-sanitizer's
    # memcheck, for out-of-bounds and misaligned accesses in the kernels.
    if command -v compute-sanitizer >/dev/null 2>&1; then
        # (test_errors' deliberate out-of-memory is an API error, not a
        # finding)
        check ops-memcheck 120 compute-sanitizer --tool memcheck \
            --report-api-errors no --error-exitcode 3 \
            "$BUNDLE/bin/test_cuda_ops"
    else
        record ops-memcheck "NOT RUN" 0 "no compute-sanitizer"
    fi
fi

# Per-operation errors, as the op test printed them.
grep -h 'rel err\|identical\|^FAIL' "$OUT/ops.log" >"$OUT/op-errors.txt" 2>/dev/null

# ---- the table -------------------------------------------------------------
python3 - "$OUT" <<'EOF' | tee "$OUT/table.txt"
import glob, json, os, sys
out = sys.argv[1]
print("\n== checks ==")
for line in open(os.path.join(out, "summary.txt")):
    name, st, secs, note = line.rstrip("\n").split("|", 3)
    print(f"{name:22} {st:10} {secs:>5}s  {note}")
ops = os.path.join(out, "op-errors.txt")
if os.path.exists(ops):
    worst = {}
    for l in open(ops):
        p = l.split()
        if "rel" in p and p[0] == "ok":
            i = p.index("rel")
            t, e = p[i - 1], float(p[i + 2])
            worst[t] = max(worst.get(t, 0.0), e)
    fails = sum(1 for l in open(ops) if l.startswith("FAIL"))
    print("\n== cuda vs ref: worst relative error per type ==")
    for t, e in sorted(worst.items()):
        print(f"{t:6} {e:.2e}")
    print(f"failed operations: {fails} (details: op-errors.txt)")
pin = {}
for p in ("off", "on", "graphs"):
    f = os.path.join(out, "suite-dataloader-pinned-" + p, "results.json")
    if os.path.exists(f):
        for r in json.load(open(f)).get("records", []):
            m = r.get("metrics", {})
            v = lambda k: (m.get(k) or {}).get("value")
            pin[(p, r.get("id"))] = (r.get("status"), v("train_loss_last"),
                                     v("h2d_copy_s"), v("h2d_overlap_share"),
                                     (r.get("throughput") or {}).get("median"))
if pin:
    print("\n== dataloader pinned off/on (cuda): loss, copy per batch, overlap ==")
    for (p, i), (st, loss, cp, ov, tp) in sorted(pin.items(), key=str):
        cps = f"{cp * 1e6:8.1f}us" if cp else "        -"
        ovs = f"{ov:5.1f}%" if ov is not None else "    -"
        tps = f"{tp:9.0f}" if tp else "        -"
        print(f"{p:7} {str(i):40} {st:8} loss {loss} copy {cps} overlap {ovs} {tps} samples/s")
cpu = sorted(glob.glob(os.path.join(out, "cpu-threads-*", "results.json")))
if cpu:
    print("\n== cpu backend, baseline --quick: threads and OMP_WAIT_POLICY ==")
    for f in cpu:
        for r in json.load(open(f)).get("records", []):
            tp = (r.get("throughput") or {}).get("median")
            print(f"{f.split(os.sep)[-2]:28} {r.get('status'):8} "
                  f"{tp or 0:9.0f} samples/s")
mp = os.path.join(out, "mempool.log")
if os.path.exists(mp):
    print("\n== mempool over cudaMalloc (LeNet b256 step sizes) ==")
    for l in open(mp):
        if l.startswith("mempool ratio:") or l.startswith("alloc+free pair"):
            print(l.rstrip())
torch = {}
tj = os.path.join(out, "torch.jsonl")
if os.path.exists(tj):
    for l in open(tj):
        r = json.loads(l)
        torch[(r["model"], r["batch"], r["precision"])] = r["samples_per_s"]
rows = {}
modes = ("malloc", "async", "search")
for f in sorted(glob.glob(os.path.join(out, "perf-b*", "results.json"))):
    mode = f.split(os.sep)[-2].rsplit("-", 1)[-1]
    for r in json.load(open(f)).get("records", []):
        c = r.get("config", {})
        key = (c.get("model"), c.get("batch"), c.get("amp.precision"))
        tp = (r.get("throughput") or {}).get("median") if r.get("status") == "ok" else None
        rows.setdefault(key, {})[mode] = tp if tp else r.get("status")
if rows:
    print("\n== training throughput, samples/s (dlbench cuda vs PyTorch eager) ==")
    print("malloc: cudaMalloc per request + cuDNN heuristic; async: CUDA's pool;"
          " search: pool + timed cuDNN search")
    print(f"{'model':10} {'batch':>5} {'prec':5} " +
          " ".join(f"{m:>9}" for m in modes) + f" {'pytorch':>9} {'best/pt':>8}")
    fmt = lambda v: f"{v:9.0f}" if isinstance(v, (int, float)) else f"{str(v or '-'):>9}"
    for key in sorted(rows, key=lambda k: tuple(str(x) for x in k)):
        m, b, p = key
        vals = [rows[key].get(md) for md in modes]
        nums = [v for v in vals if isinstance(v, (int, float))]
        pt = torch.get((m, b, p))
        ratio = f"{max(nums) / pt:.2f}x" if nums and pt else "-"
        print(f"{m:10} {b:5} {p:5} " + " ".join(fmt(v) for v in vals) +
              f" {fmt(pt)} {ratio:>8}")
EOF
grep -q 'FAIL\|TIMEOUT' "$SUMMARY" && exit 1
exit 0
