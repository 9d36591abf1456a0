#!/bin/sh
# Benchmark run by hand, of results, not speed: whether two builds train
# and infer the same bits on this machine's cpu backend, as a change that
# only restructures code must. The ref backend's digests are stored in
# tests/unit/test_train_digest.c and hold on every machine; the cpu
# backend's depend on the CPU (which kernels apply) and the oneDNN
# version, so they are compared between builds in one sitting:
#
#   top_srcdir=. sh tests/bench/same-results.sh BUILD_A BUILD_B
#
# BUILD_A and BUILD_B are build folders that hold tests/unit/
# test_train_digest (make check or make tests/unit/test_train_digest
# there). Prints both digests; exits 1 when they differ.
set -u
[ $# -eq 2 ] || { echo "usage: same-results.sh BUILD_A BUILD_B" >&2; exit 2; }
: "${top_srcdir:=.}"
for b in "$1" "$2"; do
    [ -x "$b/tests/unit/test_train_digest" ] ||
        { echo "same-results: no $b/tests/unit/test_train_digest (build it there)" >&2; exit 2; }
done
a=$(srcdir="$top_srcdir" DIGEST_PRINT=1 "$1/tests/unit/test_train_digest" 2>/dev/null)
b=$(srcdir="$top_srcdir" DIGEST_PRINT=1 "$2/tests/unit/test_train_digest" 2>/dev/null)
printf '%s:\n%s\n%s:\n%s\n' "$1" "$a" "$2" "$b"
[ -n "$a" ] && [ "$a" = "$b" ] && echo "same-results: the same bits" && exit 0
echo "same-results: the builds differ" >&2
exit 1
