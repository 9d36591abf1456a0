#!/bin/sh
# dlbench dashboard on a store of 60 nights on two machines with a step on
# one (dashboard-data.sh): index.html lists the raised alert and links a
# page per suite; the suite's page has a chart per configuration with
# both machines, the change point marked once, on its machine, with its
# commit range; the site fetches nothing (no script, style or image from
# anywhere), names from the store are escaped, no temporary file is left;
# the same store gives the same pages; bad input exits 2.
# tests/integration/dashboard-browser.sh opens it in Chromium.
. "${top_srcdir:-.}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/dashboard-data.sh"

"$DLBENCH" dashboard s.db --out site --title "nightly <perf>" >dash.out 2>dash.err
ok "dashboard: exit 0 ($(cat dash.err))" [ $? -eq 0 ]
ok "says what it wrote ($(cat dash.out))" \
    grep -q "site/index.html: 3 pages, 6 charts, 1 change points, 1 alerts" dash.out
ok "a page per suite and the index" test -f site/index.html -a -f site/suite-ok.html
ok "the index lists the raised alert" grep -q '<tr class="alert"><td class="num">1</td><td class="state-new">new' site/index.html
ok "with the series that moved" grep -q "ok: $A \[ci-1\] x1\.[01]" site/index.html
ok "and links the suite's page" grep -q 'href="suite-ok.html"' site/index.html
ok "the suite's page: one chart per configuration" [ "$(grep -o 'class="chart"' site/suite-ok.html | wc -l)" = 3 ]
ok "each with both machines' series" [ "$(grep -o 'class="series" data-machine=' site/suite-ok.html | wc -l)" = 6 ]
ok "each night a point with its interval" [ "$(grep -o 'class="point"' site/suite-ok.html | wc -l)" = 363 ]
ok "the change point once, on ci-1, with its commit range" \
    [ "$(grep -o '<g class="cp" data-machine="[^"]*" data-range="[^"]*"' site/suite-ok.html)" = \
      "<g class=\"cp\" data-machine=\"ci-1\" data-range=\"$STEP_RANGE\"" ]
ok "labelled with its range and size" grep -q ">$(echo "$STEP_RANGE" | sed 's/^\(.\{8\}\).*\.\.\(.\{8\}\).*/\1..\2/') +\(9\|1[01]\)\.[0-9]%</text>" site/suite-ok.html
ok "the machine filter lists both" [ "$(grep -o '<input type="checkbox" checked value="ci-[12]"' site/index.html | wc -l)" = 2 ]
ok "nothing fetched: no src, no external href, no url()" \
    sh -c "! grep -E -q 'src=|href=\"(https?:)?//|url\\(|@import' site/*.html"
ok "the suite's HTML name escaped" grep -q '&lt;b&gt;evil&lt;/b&gt; &amp; &quot;co&quot;' site/index.html
ok "and never raw" sh -c "! grep -q '<b>evil' site/*.html"
ok "the title escaped" grep -q '<title>nightly &lt;perf&gt;</title>' site/index.html
ok "no temporary files left" sh -c "! ls -a site | grep -q tmp"
"$DLBENCH" dashboard s.db --out site2 --title "nightly <perf>" >/dev/null 2>&1
ok "the same store, the same pages (but the time they were made)" sh -c "
    sed 's/generated [0-9TZ:-]*//' site/suite-ok.html >a.html
    sed 's/generated [0-9TZ:-]*//' site2/suite-ok.html >b.html
    cmp -s a.html b.html"
"$DLBENCH" dashboard s.db --out site3 --machine ci-2 >/dev/null 2>&1
ok "--machine ci-2: no change point there" sh -c "! grep -q 'class=\"cp\"' site3/suite-ok.html"
"$DLBENCH" dashboard nothing.db --out site4 >/dev/null 2>none.err
rc=$?
ok "a store that is not there: exit 2 ($(cat none.err))" [ $rc -eq 2 ]
ok "and no site made" [ ! -e site4 ]
"$DLBENCH" dashboard s.db >/dev/null 2>&1
ok "without --out: exit 2" [ $? -eq 2 ]

finish
