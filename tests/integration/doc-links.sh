#!/bin/sh
# Every link from the README and the pages under doc/ to a local file
# resolves, and so does the heading it points at (#anchor, as GitHub
# derives it from the heading's text). Links to web addresses are not
# followed. A moved or renamed page breaks this test, not a reader's link.
. "${top_srcdir:-.}/tests/integration/lib.sh"

if ! command -v python3 >/dev/null 2>&1; then
    echo "python3 not installed: skipped" >&2
    exit 77
fi

src=$(cd "$top_srcdir" && pwd)
python3 - "$src" >links.out 2>&1 <<'PY'
import os, re, sys

root = sys.argv[1]
pages = [os.path.join(root, "README.md")]
for d, _, files in os.walk(os.path.join(root, "doc")):
    pages += [os.path.join(d, f) for f in sorted(files) if f.endswith(".md")]

def text_outside_code(path):
    out, fenced = [], False
    for line in open(path, encoding="utf-8"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return out

def slugs(path):
    # headings with their code spans kept, as GitHub keeps their text
    seen, fenced = set(), False
    for line in open(path, encoding="utf-8"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r"#+\s+(.*)", line)
        if m:
            t = m.group(1).strip().lower().replace("`", "")
            seen.add(re.sub(r"[^\w\- ]", "", t).replace(" ", "-"))
    return seen

bad = n = 0
for page in pages:
    for line in text_outside_code(page):
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"[a-z]+:", target):
                continue
            n += 1
            path, _, frag = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            rel = os.path.relpath(page, root)
            if not os.path.exists(full):
                print("%s: %s: no such file" % (rel, target))
                bad += 1
            elif frag and full.endswith(".md") and frag not in slugs(full):
                print("%s: %s: no heading #%s there" % (rel, target, frag))
                bad += 1
print("%d links checked, %d broken" % (n, bad))
sys.exit(1 if bad else 0)
PY
rc=$?
cat links.out >&2
ok "every local link resolves ($(tail -1 links.out))" [ "$rc" -eq 0 ]

# The README is read in one sitting: 300 lines at most; the rest lives in
# doc/ (the guide's limit).
ok "README.md is at most 300 lines ($(wc -l <"$src/README.md"))" [ "$(wc -l <"$src/README.md")" -le 300 ]
finish
