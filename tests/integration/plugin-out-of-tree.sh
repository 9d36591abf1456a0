#!/bin/sh
# A third-party plugin builds against the installed SDK alone: compile
# plugins/skeleton/skeleton.c outside the tree with pkg-config against the
# prefix in $DLB_INSTALL_PREFIX, then load it with the installed dlbench
# and check that plugin-help lists its parameters.
# Expected: plugin-help prints depth, mode and verbose. Bugs it guards
# against: a public header that needs a private one, a .pc file with wrong
# paths, a plugin that cannot be loaded from --plugin-dir.
# Skips (77) when DLB_INSTALL_PREFIX is unset.
set -eu

if [ -z "${DLB_INSTALL_PREFIX:-}" ]; then
    echo "DLB_INSTALL_PREFIX is not set: skipping" >&2
    exit 77
fi
prefix=$DLB_INSTALL_PREFIX
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
DLBENCH=${DLBENCH:-$prefix/bin/dlbench}
CC=${CC:-cc}

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

work=$(mktemp -d "${TMPDIR:-/tmp}/dlb-oot-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
# mktemp -d makes the directory private (0700); the loader refuses
# world-writable ones.
cp "$srcdir/plugins/skeleton/skeleton.c" "$work/"

# No -I into the source tree: only what is installed may be used. -Werror
# with the warning flags the project builds with keeps the SDK headers clean.
# shellcheck disable=SC2046
(cd "$work" && $CC -Wall -Wextra -Wpedantic -Werror -shared -fPIC \
    skeleton.c -o skeleton.so $(pkg-config --cflags --libs dlbench-plugin)) ||
    fail "skeleton.c does not build against the installed SDK"
chmod 755 "$work/skeleton.so"

out=$("$DLBENCH" plugin-help skeleton --plugin-dir "$work" 2>&1) ||
    fail "plugin-help skeleton failed: $out"
for key in depth mode verbose; do
    printf '%s\n' "$out" | grep -q -w "$key" ||
        fail "plugin-help output does not name parameter '$key': $out"
done
echo "plugin-out-of-tree: skeleton built with pkg-config and loaded"
