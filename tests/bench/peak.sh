#!/bin/sh
# Benchmark, run by hand on a quiet machine (not part of `make check`, whose
# tests run side by side, so that any ratio of two figures can be upset):
# `dlbench info --peak` with a cache of its own, its figures as a table,
# and what they should show where nothing else runs.
#
#   DLBENCH=build/dlbench sh tests/bench/peak.sh
#
# Acceptance, each only where the probe measured the units it names; ratios
# are of one thread's figures, which contention upsets least:
#   probe not contended, and done in under 4 s;
#   AMX bf16 >= 4 x fp32: Sapphire Rapids does 1,024 bf16 FLOP per cycle
#     and core on AMX against 64 fp32 FLOP on its two FMA pipes;
#   AMX int8 >= 1.5 x AMX bf16: twice the multiply-adds per instruction;
#   fp16 >= 1.5 x fp32: 32 lanes to a register against 16;
#   VNNI >= 1.5 x fp32: 4 int8 pairs to a lane against one FMA.
# AVX512_BF16 (vdpbf16ps) is only printed: about 2 x fp32 on Zen 4, but
# 0.5 x on Sapphire Rapids, where bf16's throughput is AMX.
# Exit status 1 when an acceptance fails, 2 when the probe does.
set -u
: "${DLBENCH:?set DLBENCH to the dlbench binary}"
cache=$(mktemp -d "${TMPDIR:-/tmp}/peak.XXXXXX") || exit 2
trap 'rm -rf "$cache"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
DLBENCH_CACHE_DIR=$cache "$DLBENCH" info --peak >"$cache/info.json" || exit 2
python3 - "$cache/info.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["peak"]
units = ["fp32", "bf16", "fp16", "vnni", "amx_bf16", "amx_int8"]
print(f"{p['cpu_model']}, {p['threads']} threads"
      f"{', pinned' if p['pinned'] else ''}"
      f"{', CONTENDED' if p['contended'] else ''}; probe {p['probe_s']:.2f} s")
print(f"{'unit':10} {'isa':12} {'all threads':>12} {'one thread':>12}")
one = {}
for u in units:
    f = p[u]
    if f is None:
        print(f"{u:10} {'none':12}")
        continue
    k = "gops" if "gops" in f else "gflops"
    one[u] = f[k + "_1t"]
    print(f"{u:10} {f['isa']:12} {f[k]:12.1f} {f[k + '_1t']:12.1f}  "
          f"{'GOP/s' if k == 'gops' else 'GFLOP/s'}")
m = p["memory"]
print(f"memory     {m['isa']:12} triad {m['triad_gbs']:.1f} GB/s, "
      f"read {m['read_gbs']:.1f} GB/s over {m['mib']:.0f} MiB")

failed = 0
def accept(what, ok):
    global failed
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    failed |= not ok
accept("probe not contended", not p["contended"])
accept(f"probe under 4 s ({p['probe_s']:.2f} s)", p["probe_s"] < 4)
for unit, base, factor in [("amx_bf16", "fp32", 4), ("amx_int8", "amx_bf16", 1.5),
                           ("fp16", "fp32", 1.5), ("vnni", "fp32", 1.5)]:
    if unit in one and base in one:
        r = one[unit] / one[base]
        accept(f"{unit} >= {factor} x {base} (one thread: {r:.2f} x)", r >= factor)
sys.exit(1 if failed else 0)
PY
