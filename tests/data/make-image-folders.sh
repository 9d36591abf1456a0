#!/bin/sh
# The image folders the docs and benchmarks use (doc/suites.md, "Data"):
# Fashion-MNIST (or its synthetic stand-in, said, where the package is not
# installed) as PNG and as JPEG, at 1x32x32 and at 3x224x224, each with
# 100 training and 20 test images per class, in DIR/png-32, DIR/jpeg-32,
# DIR/png-224 and DIR/jpeg-224.
#
#   tests/data/make-image-folders.sh DIR [make-image-folder options]
#
# MAKE_IMAGE_FOLDER names the tool when it is not beside this script in
# the build tree (make check builds it as tests/data/make-image-folder).
set -eu
[ $# -ge 1 ] || { echo "usage: $0 DIR [options]" >&2; exit 2; }
out=$1
shift
tool=${MAKE_IMAGE_FOLDER:-$(dirname "$0")/make-image-folder}
[ -x "$tool" ] || tool=./tests/data/make-image-folder
[ -x "$tool" ] || { echo "$0: build the tool first: make tests/data/make-image-folder" >&2; exit 2; }
for fmt in png jpeg; do
    "$tool" --size 32 --channels 1 --format $fmt --train 100 --test 20 "$@" "$out/$fmt-32"
    "$tool" --size 224 --channels 3 --format $fmt --train 100 --test 20 "$@" "$out/$fmt-224"
done
echo "$out: png-32 jpeg-32 png-224 jpeg-224"
