#!/bin/sh
# The core's folders are layers: each may include only the folders below
# it (the table), so data flows one way and the parent (run/, search/)
# and the child (child/) share only what lies under both. Also: no core
# file outside core/backend/cuda includes a CUDA or NCCL header, and no C
# file or header in core/, plugins/ or tests/ is over 700 lines; a
# folder's *_impl.h is included by its own files only. Every
# violation is named with its file and line. The checker is first run on
# a small planted tree, to show that it finds what it should.
. "${top_srcdir:-.}/tests/integration/lib.sh"

src=$(cd "$top_srcdir" && pwd)

# FOLDER: the folders under core/ that it may include, besides itself.
# A folder may name only folders listed above it, so the table is acyclic
# by construction (the checker verifies that too). core/backend/'s
# folders (ref/, cpu/, cuda/) are checked as backend/.
LAYERS='
util:
backend: util
peak: util
stats: util
scenario: util stats
results: util stats backend scenario
options: util results
suite: util
plan: util stats results options suite
proc: util stats results options suite plan
data: util backend
model: util backend data suite
ckpt: util backend data model
train: util backend stats data model ckpt
services: util backend data model ckpt train
select: util stats results options suite plan model
compare: util stats results
store: util stats results
history: util stats results compare store
dashboard: util stats results compare store history
plot: util stats results compare proc
report: util stats scenario results options suite plan select compare plot
run: util backend peak stats results options suite plan proc data model select compare plot report
search: util backend stats results options suite plan proc data model select run
child: util backend peak stats scenario results options suite plan proc data model ckpt train services
cli: util backend peak stats results options suite plan proc data model ckpt train services select compare store history dashboard plot report run search child
'

# Known violations, each to be removed with its fix: FILE INCLUDED-PATH.
#  - A folder's *_impl.h is for its own files. The model's services and
#    training reach into the network's internals (model/model_impl.h);
#    the search ranks through the selection's (select/select_impl.h).
ALLOWED='
core/services/model_distill.c model/model_impl.h
core/services/model_replica.c model/model_impl.h
core/services/model_stage_impl.h model/model_impl.h
core/services/model_stage_state.c model/model_impl.h
core/services/model_state.c model/model_impl.h
core/train/model_graph.c model/model_impl.h
core/train/model_prune_tune.c model/model_impl.h
core/train/model_scaler.c model/model_impl.h
core/search/search.c select/select_impl.h
'
# Files allowed over 700 lines, each to be split.
LONG='
'

# check ROOT: print one line per violation under ROOT.
check() {
    root=$1
    # The table itself: every folder named is defined above; every folder
    # of core/ (but backend) is in the table; no file at core/'s top.
    printf '%s\n' "$LAYERS" | awk -F: '
        NF == 0 || $1 == "" { next }
        { n = split($2, d, " ")
          for (i = 1; i <= n; i++)
              if (!(d[i] in seen))
                  printf "layers table: %s may include %s, which is not below it\n", $1, d[i]
          seen[$1] = 1 }'
    for d in "$root"/core/*/; do
        f=$(basename "$d")
        printf '%s\n' "$LAYERS" | grep -q "^$f:" ||
            echo "core/$f/: a folder missing from the layers table"
    done
    for f in "$root"/core/*.c "$root"/core/*.h; do
        [ -f "$f" ] && echo "${f#"$root"/}: a core file outside a stage folder"
    done
    # Includes between folders.
    (cd "$root" && find core -name '*.[ch]' -type f -print | sort | while read -r f; do
        grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/' "$f" |
            sed "s|^|$f:|"
    done) | awk -v layers="$LAYERS" -v allowed="$ALLOWED" '
        BEGIN {
            n = split(layers, l, "\n")
            for (i = 1; i <= n; i++) {
                if (split(l[i], kv, ":") < 2) continue
                known[kv[1]] = 1
                m = split(kv[2], d, " ")
                for (j = 1; j <= m; j++) may[kv[1] "/" d[j]] = 1
            }
            n = split(allowed, l, "\n")
            for (i = 1; i <= n; i++)
                if (split(l[i], kv, " ") == 2) ok[kv[1] " " kv[2]] = 1
        }
        {
            file = $0; sub(/:.*/, "", file)
            rest = substr($0, length(file) + 2)
            line = rest; sub(/:.*/, "", line)
            inc = rest; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
            split(file, p, "/"); own = p[2]
            split(inc, q, "/"); to = q[1]
            if (to == own || !(to in known) || (file " " inc) in ok) next
            if (!((own "/" to) in may))
                printf "%s:%s: %s/ includes %s (%s/ is not below %s/)\n", file, line, own, inc, to, own
            else if (inc ~ /_impl\.h$/)
                printf "%s:%s: %s/ includes %s, private to %s/\n", file, line, own, inc, to
        }'
    # CUDA and NCCL headers only in core/backend/cuda.
    (cd "$root" && find core -path core/backend/cuda -prune -o \
        \( -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' \) -type f -print |
        sort | while read -r f; do
        grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](cuda|cudnn|cublas|cusparse|curand|cufft|nccl|nvrtc|nvml|nvToolsExt)[^/]*\.h[>"]' "$f" |
            sed "s|^\([0-9]*\):.*|$f:\1: a CUDA or NCCL header outside core/backend/cuda|"
    done)
    # No C file or header over 700 lines.
    (cd "$root" && find core plugins tests -name '*.[ch]' -type f 2>/dev/null |
        sort | while read -r f; do
        n=$(wc -l <"$f")
        if [ "$n" -gt 700 ] && ! printf '%s\n' "$LONG" | grep -qx "$f"; then
            echo "$f:$n: $n lines, over 700"
        fi
    done)
}

# stale ROOT: an allowance no include needs any more must go with its fix.
stale() {
    printf '%s\n' "$ALLOWED" | while read -r f inc; do
        [ -n "$f" ] || continue
        [ -f "$1/$f" ] && grep -q "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"$inc\"" "$1/$f" ||
            echo "$f: allowed to include $inc, which it no longer does: drop the allowance"
    done
}

# A planted tree: one upward include, one CUDA header, one long file, a
# file outside the folders, another folder's private header; one allowed
# include and a same-folder one.
mkdir -p fake/core/util fake/core/cli fake/core/child fake/plugins
printf '#include "cli/main.h"\n#include "util/rng.h"\n' >fake/core/util/a.c
printf '#include "util/error.h"\n#include <cuda_runtime.h>\n' >fake/core/child/b.c
printf '#include "child/b.h"\n#include "child/b_impl.h"\n' >fake/core/cli/c.c
: >fake/core/stray.c
awk 'BEGIN { for (i = 0; i < 701; i++) print "" }' >fake/plugins/long.c
check "$PWD/fake" >fake.out
cat fake.out >&2
ok "planted: the upward include is named with file and line" \
    grep -q '^core/util/a.c:1: util/ includes cli/main.h' fake.out
ok "planted: the CUDA header is named" \
    grep -q '^core/child/b.c:2: a CUDA or NCCL header' fake.out
ok "planted: the long file is named" grep -q '^plugins/long.c:701:' fake.out
ok "planted: the stray file is named" grep -q '^core/stray.c:' fake.out
ok "planted: the private header is named" \
    grep -q '^core/cli/c.c:2: cli/ includes child/b_impl.h, private' fake.out
ok "planted: nothing else (5 violations)" [ "$(wc -l <fake.out)" -eq 5 ]

check "$src" >real.out
stale "$src" >>real.out
cat real.out >&2
ok "the core keeps its layers, CUDA in core/backend/cuda, files under 700 lines ($(wc -l <real.out) violations)" \
    [ ! -s real.out ]
finish
