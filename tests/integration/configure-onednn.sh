#!/bin/sh
# configure --with-onednn=PREFIX refuses a PREFIX that is not a oneDNN
# installation and says what is missing there: the header, or (headers
# copied without the library, as from PyPI's devel wheel alone) the
# library. The source tree's configure runs in a scratch folder and stops
# at the oneDNN check, after the compiler checks: some 10 s each. Skipped
# where the source tree is configured in place (configure then refuses any
# other build folder) or has no configure script.
. "${top_srcdir:-.}/tests/integration/lib.sh"

src=$(cd "$top_srcdir" && pwd)
if [ ! -x "$src/configure" ] || [ -f "$src/config.status" ]; then
    echo "configure in the source tree: skipped (build out of tree to run this)" >&2
    exit 77
fi

mkdir none-build && cd none-build || exit 1
"$src/configure" --with-onednn="$T/none" --without-cuda --without-mpi \
    --disable-dependency-tracking >out.txt 2>err.txt
ok "a PREFIX without oneDNN stops configure" [ $? -ne 0 ]
ok "... naming the header it looked for" \
    grep -q "with-onednn=$T/none: $T/none/include/oneapi/dnnl/dnnl.h not found" err.txt
ok "... and how to make one" grep -q "ci/onednn-prefix" err.txt
cd "$T" || exit 1

# Headers without the library: any oneDNN's headers will do.
hdr=
for d in /usr/include/oneapi/dnnl /usr/local/include/oneapi/dnnl; do
    [ -f "$d/dnnl.h" ] && hdr=$d && break
done
if [ -n "$hdr" ]; then
    mkdir -p headers-only/include/oneapi headers-build
    cp -r "$hdr" headers-only/include/oneapi/
    (cd headers-build && "$src/configure" --with-onednn="$T/headers-only" \
        --without-cuda --without-mpi --disable-dependency-tracking \
        >out.txt 2>err.txt)
    ok "headers without the library stop configure" [ $? -ne 0 ]
    ok "... saying the library is missing" \
        grep -q "no libdnnl.so in $T/headers-only/lib" headers-build/err.txt
fi
finish
