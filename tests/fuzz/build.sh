#!/bin/sh
# Build the libFuzzer harnesses with clang, apart from the main build (any
# compiler): build.sh SRCDIR BUILDDIR "LIBS" CORE-SOURCE...
#
# The core's sources (the libdlbcore list from Makefile.am, without the
# oneDNN and CUDA backends, which no parser needs) are compiled once with
# coverage and AddressSanitizer + UndefinedBehaviorSanitizer into
# tests/fuzz/libcore-fuzz.a (sources generated in the build directory, such
# as the ONNX reader, are taken from there); each tests/fuzz/fuzz_NAME.c is linked against
# it as tests/fuzz/fuzz_NAME. FUZZ_CC (default clang) and FUZZ_CFLAGS
# override the compiler and its flags; FUZZ_DEP_CFLAGS (from the makefile)
# are the include flags of the core's libraries.
set -u
srcdir=$1 builddir=$2 libs=$3
shift 3
cc=${FUZZ_CC:-clang}
san='-fsanitize=address,undefined -fno-sanitize-recover=undefined'
cflags="${FUZZ_CFLAGS:--g -O1 -fno-omit-frame-pointer} $san -std=c11 -D_GNU_SOURCE \
-I$srcdir/include -I$srcdir/core -I$builddir -I$builddir/core ${FUZZ_DEP_CFLAGS:-}"
out=$builddir/tests/fuzz
harnesses='suite model idx results safetensors onnx image'
mkdir -p "$out/obj" || exit 1

# libFuzzer ships with clang, but distributions split it out: say what is
# missing rather than fail on a link error.
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
    >"$out/probe.c"
if ! "$cc" -fsanitize=fuzzer "$out/probe.c" -o "$out/probe" >"$out/probe.log" 2>&1; then
    echo "make fuzz: '$cc -fsanitize=fuzzer' does not link (see $out/probe.log):" >&2
    echo "  install clang with its libFuzzer runtime (Debian: apt-get install clang)," >&2
    echo "  or point FUZZ_CC at a clang that has it" >&2
    exit 1
fi
rm -f "$out/probe" "$out/probe.c" "$out/probe.log"

# The archive is rebuilt when any core source or header is newer.
lib=$out/libcore-fuzz.a
stale=1
if [ -f "$lib" ] && [ -z "$(find "$srcdir/core" "$srcdir/include" "$builddir/config.h" \
        -newer "$lib" -name '*.[ch]' 2>/dev/null | head -n 1)" ]; then
    stale=0
fi
if [ $stale -eq 1 ]; then
    echo "  FUZZCC   core (for $harnesses)"
    rm -f "$out"/obj/*.o "$lib"
    for f in "$@"; do
        case $f in
        *.c) case $f in core/backend/cpu/*|core/backend/cuda/*) ;; *) echo "$f" ;; esac ;;
        esac
    done | xargs -P "$(nproc 2>/dev/null || echo 2)" -I{} sh -c '
        o=$3/obj/$(echo "$1" | tr / _ | sed "s/\.c$/.o/")
        f=$5/$1
        [ -f "$f" ] || f=$6/$1   # generated (the ONNX reader)
        $2 -c $4 -fsanitize=fuzzer-no-link "$f" -o "$o" || { echo "make fuzz: cannot compile $1" >&2; exit 255; }
    ' _ {} "$cc" "$out" "$cflags" "$srcdir" "$builddir" || exit 1
    ar rcs "$lib" "$out"/obj/*.o || exit 1
fi

for h in $harnesses; do
    echo "  FUZZLD   tests/fuzz/fuzz_$h"
    # shellcheck disable=SC2086
    "$cc" $cflags -fsanitize=fuzzer "$srcdir/tests/fuzz/fuzz_$h.c" "$lib" $libs \
        -o "$out/fuzz_$h" || { echo "make fuzz: cannot link fuzz_$h" >&2; exit 1; }
done
