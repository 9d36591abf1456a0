#!/bin/sh
# ci/perf-ab's order of the two builds in each pass (--orders prints it
# without building anything): each build runs first in half the passes,
# the orders alternating, for any seed, so whatever follows a process
# start falls on both alike; the seed picks the first pass's, and the same
# seed gives the same orders. (Drawn with awk's srand before, every pass of
# a day ran one order: mawk saturates seeds past 2^32.)
. "${top_srcdir:-.}/tests/integration/lib.sh"
AB="$top_srcdir/ci/perf-ab"

for seed in 20261206 20261207 0 7; do
    sh "$AB" --orders --passes 8 --seed "$seed" >o-$seed.txt 2>err.txt
    ok "seed $seed: exit 0" [ $? -eq 0 ]
    ok "seed $seed: 8 passes" [ "$(wc -l <o-$seed.txt)" -eq 8 ]
    ok "seed $seed: base first in 4" [ "$(grep -c ': base new$' o-$seed.txt)" -eq 4 ]
    ok "seed $seed: new first in 4" [ "$(grep -c ': new base$' o-$seed.txt)" -eq 4 ]
    ok "seed $seed: alternating" python3 -c "
import sys
o = [l.split(': ')[1].strip() for l in open('o-$seed.txt')]
assert all(a != b for a, b in zip(o, o[1:])), o"
done
ok "the seed picks the first pass's order" [ "$(head -1 o-20261206.txt)" != "$(head -1 o-20261207.txt)" ]
sh "$AB" --orders --passes 8 --seed 20261206 >again.txt 2>&1
ok "the same seed, the same orders" cmp -s again.txt o-20261206.txt
sh "$AB" --orders --passes 5 --seed 3 >odd.txt 2>&1
ok "an odd count: 3 and 2" python3 -c "
o = [l.split(': ')[1].strip() for l in open('odd.txt')]
assert sorted([o.count('base new'), o.count('new base')]) == [2, 3], o"
sh "$AB" --orders --passes 1 >/dev/null 2>one.err
ok "one pass refused: exit 2" [ $? -eq 2 ]
ok "... saying why" grep -q "needs 2 or more" one.err
finish
