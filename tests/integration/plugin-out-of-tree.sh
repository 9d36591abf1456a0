#!/bin/sh
# A third-party plugin builds against the installed SDK alone: compile
# plugins/skeleton/skeleton.c outside the tree with pkg-config against the
# prefix in $DLB_INSTALL_PREFIX, then load it with the installed dlbench
# and check that plugin-help lists its parameters.
# Expected: plugin-help prints depth, mode and verbose. Bugs it guards
# against: a public header that needs a private one, a .pc file with wrong
# paths, a plugin that cannot be loaded from --plugin-dir.
# Without $DLB_INSTALL_PREFIX it installs the build tree into a staging
# directory (make install DESTDIR=...) and checks the installed layout too.
set -eu

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
CC=${CC:-cc}
work=$(mktemp -d "${TMPDIR:-/tmp}/dlb-oot-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

if [ -n "${DLB_INSTALL_PREFIX:-}" ]; then
    prefix=$DLB_INSTALL_PREFIX
    DLBENCH=${DLBENCH:-$prefix/bin/dlbench}
elif [ -n "${top_builddir:-}" ] && [ -f "$top_builddir/dlbench-plugin.pc" ]; then
    stage=$work/stage
    make -s -C "$top_builddir" install DESTDIR="$stage" >"$work/install.log" 2>&1 || {
        cat "$work/install.log" >&2
        echo "plugin-out-of-tree: make install DESTDIR=$stage failed" >&2
        exit 1
    }
    configured=$(sed -n 's/^prefix=//p' "$top_builddir/dlbench-plugin.pc")
    prefix=$stage$configured
    # pkg-config prepends the staging root to the installed paths.
    PKG_CONFIG_SYSROOT_DIR=$stage
    export PKG_CONFIG_SYSROOT_DIR
    DLBENCH=$prefix/bin/dlbench
    for f in bin/dlbench lib/dlbench/null.so lib/dlbench/skeleton.so \
        include/dlbench/plugin.h include/dlbench/param.h include/dlbench/status.h \
        include/dlbench/backend.h share/dlbench/suites/models/lenet.ini \
        share/man/man1/dlbench.1; do
        [ -e "$prefix/$f" ] || {
            echo "plugin-out-of-tree: make install left out $f" >&2
            exit 1
        }
    done
    # Only the entry point is exported from an installed plugin.
    syms=$(nm -D --defined-only "$prefix/lib/dlbench/null.so" | awk '$2 == "T" {print $3}')
    [ "$syms" = dlb_plugin_entry ] || {
        echo "plugin-out-of-tree: null.so exports more than dlb_plugin_entry: $syms" >&2
        exit 1
    }
else
    echo "neither DLB_INSTALL_PREFIX nor a build tree: skipping" >&2
    exit 77
fi

fail() {
    echo "plugin-out-of-tree: $*" >&2
    exit 1
}

command -v pkg-config >/dev/null 2>&1 || fail "pkg-config is not installed"
[ -x "$DLBENCH" ] || fail "no dlbench binary at $DLBENCH"

# Search both spellings of libdir; the installed .pc decides the paths.
PKG_CONFIG_PATH=$prefix/lib/pkgconfig:$prefix/lib64/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
pkg-config --exists dlbench-plugin ||
    fail "pkg-config finds no dlbench-plugin.pc under $prefix/lib/pkgconfig"

# mktemp -d makes the directory private (0700); the loader refuses
# world-writable ones.
mkdir "$work/oot"
chmod 755 "$work/oot"
cp "$srcdir/plugins/skeleton/skeleton.c" "$work/oot/"

# No -I into the source tree: only what is installed may be used. -Werror
# with the warning flags the project builds with keeps the SDK headers clean.
# shellcheck disable=SC2046
(cd "$work/oot" && $CC -Wall -Wextra -Wpedantic -Werror -shared -fPIC \
    skeleton.c -o skeleton.so $(pkg-config --cflags --libs dlbench-plugin)) ||
    fail "skeleton.c does not build against the installed SDK"
chmod 755 "$work/oot/skeleton.so"

out=$("$DLBENCH" plugin-help skeleton --plugin-dir "$work/oot" 2>&1) ||
    fail "plugin-help skeleton failed: $out"
for key in depth mode verbose; do
    printf '%s\n' "$out" | grep -q -w "$key" ||
        fail "plugin-help output does not name parameter '$key': $out"
done
echo "plugin-out-of-tree: skeleton built with pkg-config and loaded"
