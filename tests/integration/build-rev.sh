#!/bin/sh
# ci/build-rev, the builder the A/B gate and dlbench bisect share, on a
# scratch repository whose configure and Makefile are stand-ins (the
# "build" copies a file): a commit is built once and found in the cache
# after, the folder printed last; --worktree builds the working tree with
# its untracked files; a build that fails exits 1 and shows the log's
# tail, and leaves no complete build; a revision that is not there exits 2.
. "${top_srcdir:-.}/tests/integration/lib.sh"

BR="$top_srcdir/ci/build-rev"
git init -q repo && git -C repo config user.email t@example.org && git -C repo config user.name t
cat >repo/configure <<'SH'
#!/bin/sh
src=$(dirname "$0")
echo "configure: $*" >configured.txt
printf 'all:\n\tcp %s/version.txt built.txt\n' "$src" >Makefile
SH
chmod +x repo/configure
echo one >repo/version.txt
git -C repo add -A && git -C repo commit -q -m one
echo two >repo/version.txt
git -C repo commit -q -a -m two

sh "$BR" --repo repo --cache cache HEAD~1 >first.out 2>first.err
ok "builds a commit: exit 0 ($(cat first.err))" [ $? -eq 0 ]
dir=$(tail -n 1 first.out)
ok "prints its build folder last" [ "$(cat "$dir/built.txt" | head -n 1)" = one ]
ok "configured without CUDA" grep -q -- "--without-cuda" "$dir/configured.txt"
ok "marked complete" [ -f "$dir/.complete" ]
ok "said it built" grep -q "building in" first.err
sh "$BR" --repo repo --cache cache HEAD~1 >second.out 2>second.err
ok "the second time: cached" grep -q "cached build" second.err
ok "the same folder" [ "$(tail -n 1 second.out)" = "$dir" ]
sh "$BR" --repo repo --cache cache HEAD >head.out 2>/dev/null
ok "another commit, another build" [ "$(head -n 1 "$(tail -n 1 head.out)/built.txt")" = two ]

echo three >repo/version.txt
echo untracked >repo/extra.txt
sh "$BR" --repo repo --cache cache --worktree >wt.out 2>wt.err
ok "--worktree: the working tree as it is" [ "$(head -n 1 "$(tail -n 1 wt.out)/built.txt")" = three ]
ok "--worktree: with untracked files" [ -f cache/worktree/src/extra.txt ]

printf '#!/bin/sh\necho "configure: broken on purpose" >&2\nexit 3\n' >repo/configure
git -C repo commit -q -a -m broken
sh "$BR" --repo repo --cache cache HEAD >bad.out 2>bad.err
rc=$?
ok "a build that fails: exit 1" [ $rc -eq 1 ]
ok "shows the log's tail ($(tail -n 1 bad.err))" grep -q "broken on purpose" bad.err
ok "and leaves no complete build" [ ! -e "cache/$(git -C repo rev-parse HEAD)/build/.complete" ]
sh "$BR" --repo repo --cache cache nosuchrev >/dev/null 2>nosuch.err
rc=$?
ok "a revision that is not there: exit 2 ($(cat nosuch.err))" [ $rc -eq 2 ]

finish
