#!/bin/sh
# The dashboard in a real browser: headless Chromium (Debian's chromium)
# loads the suite's page from the file system with the network off, the
# page's script runs (data-ready) and shows every chart; the screenshot
# holds the change point's red dashed line, and with #machine=ci-2 in the
# address (the machine filter) the charts stay and the line is gone.
# Skipped (77) where no Chromium is installed.
. "${top_srcdir:-.}/tests/integration/lib.sh"

browser=
for b in chromium chromium-browser google-chrome; do
    command -v "$b" >/dev/null 2>&1 && { browser=$b; break; }
done
if [ -z "$browser" ]; then
    echo "SKIP: no Chromium here (apt-get install chromium): the dashboard is not opened in a browser" >&2
    exit 77
fi
. "$top_srcdir/tests/integration/dashboard-data.sh"
"$DLBENCH" dashboard s.db --out site >/dev/null 2>dash.err
ok "dashboard: exit 0 ($(cat dash.err))" [ $? -eq 0 ]

# chrome ARGS...: headless, no sandbox (tests may run as root), a profile
# of its own, no network at all, a time limit.
chrome() {
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
        --user-data-dir="$PWD/profile" --proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>' \
        --window-size=1300,1000 "$@" 2>>chrome.log
}

page="file://$PWD/site/suite-ok.html"
chrome --dump-dom "$page" >dom.html
ok "the page loads and its script runs" grep -q '<body [^>]*data-ready="1"' dom.html
ok "its script shows the 3 charts" grep -q 'data-charts-shown="3"' dom.html
ok "the change point is in the page" grep -q '<g class="cp" data-machine="ci-1"' dom.html
chrome --dump-dom "$page#machine=ci-2" >dom2.html
ok "#machine=ci-2: the charts stay" grep -q 'data-charts-shown="3"' dom2.html
ok "#machine=ci-2: ci-1's line and change point are hidden" \
    grep -q '<g class="cp hidden" data-machine="ci-1"' dom2.html

chrome --screenshot="$PWD/all.png" "$page" >/dev/null
chrome --screenshot="$PWD/ci2.png" "$page#machine=ci-2" >/dev/null
red=$(python3 "$top_srcdir/tests/integration/png-colour.py" all.png d62728 30)
red2=$(python3 "$top_srcdir/tests/integration/png-colour.py" ci2.png d62728 30)
blue=$(python3 "$top_srcdir/tests/integration/png-colour.py" all.png 0072b2 30)
ok "the screenshot shows ci-1's series (blue pixels: $blue)" [ "${blue:-0}" -gt 1000 ]
ok "and the change point's red dashed line (red pixels: $red)" [ "${red:-0}" -gt 150 ]
ok "filtered to ci-2, no red ($red2)" [ "${red2:-1}" -eq 0 ]

finish
