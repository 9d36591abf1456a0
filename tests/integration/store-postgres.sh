#!/bin/sh
# The results store on PostgreSQL (libpq), through the interface the
# SQLite store uses: runs added once, two writers at once, a writer killed
# inside its transaction (the server rolls it back), change points, an
# alert confirmed and raised, thresholds and the dashboard, all against a
# real server; a server that cannot be reached is exit 2 with libpq's
# reason. The server: DLBENCH_TEST_PG_URL (one where this test may create
# and drop a database; .ci/run starts Debian's cluster and sets it), else
# a throwaway one this test starts with initdb on a socket of its own.
# Skipped (77), with the reason, where dlbench was built without libpq or
# no server can start.
. "${top_srcdir:-.}/tests/integration/lib.sh"

if "$DLBENCH" store info 'postgresql:///x?host=/nonexistent' 2>&1 | grep -q "built without libpq"; then
    echo "SKIP: this dlbench was built without libpq (install libpq-dev and configure again)" >&2
    exit 77
fi
db=dlbtest_$$
admin=
pgdir=
cleanup() {
    if [ -n "$admin" ]; then
        psql "$admin" -q -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
    fi
    if [ -n "$pgdir" ]; then
        as_pg "$bin/pg_ctl" -D "$pgdir/data" -m immediate stop >/dev/null 2>&1
        rm -rf "$pgdir"
    fi
    rm -rf "$T"
}
trap cleanup EXIT
# as_pg CMD...: as the server's owner (postgres refuses to run as root).
as_pg() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

if [ -n "${DLBENCH_TEST_PG_URL:-}" ] && command -v psql >/dev/null 2>&1; then
    admin=$DLBENCH_TEST_PG_URL
    psql "$admin" -q -c "CREATE DATABASE $db" >/dev/null 2>psql.err ||
        { echo "SKIP: cannot create a database on DLBENCH_TEST_PG_URL: $(cat psql.err)" >&2; admin=; exit 77; }
    case $admin in *\?*) URL="$admin&dbname=$db" ;; *) URL="$admin?dbname=$db" ;; esac
else
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    [ -x "$bin/initdb" ] || bin=$(dirname "$(command -v initdb 2>/dev/null || echo /x/initdb)")
    if [ ! -x "$bin/initdb" ]; then
        echo "SKIP: no PostgreSQL server here (apt-get install postgresql, or set DLBENCH_TEST_PG_URL)" >&2
        exit 77
    fi
    if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
        echo "SKIP: running as root without a postgres user to run the server as" >&2
        exit 77
    fi
    pgdir=$(mktemp -d "${TMPDIR:-/tmp}/dlbench-pg.XXXXXX")
    [ "$(id -u)" -eq 0 ] && chown postgres "$pgdir"
    port=$((50000 + $$ % 10000))
    if ! as_pg "$bin/initdb" -D "$pgdir/data" -A trust -U postgres >"$pgdir/initdb.log" 2>&1 ||
       ! as_pg "$bin/pg_ctl" -D "$pgdir/data" -l "$pgdir/server.log" -w -t 60 \
           -o "-k $pgdir -p $port -c listen_addresses=''" start >/dev/null 2>&1; then
        echo "SKIP: the PostgreSQL server did not start: $(tail -n 3 "$pgdir/initdb.log" "$pgdir/server.log" 2>/dev/null)" >&2
        exit 77
    fi
    URL="postgresql:///postgres?host=$pgdir&port=$port&user=postgres"
fi
echo "store: $URL" >&2

CRAFT="$top_srcdir/tests/integration/craft-nights.py"
A='testload.work=10000 testload.samples_per_step=1'
"$DLBENCH" --suite "$SUITES/ok.ini" --set testload.clock=synthetic --out base >/dev/null 2>&1
python3 "$CRAFT" base a 26 --host box-a --noise 0.005 --at 20 --step 0.08 --config "$A" >/dev/null
python3 "$CRAFT" base b 10 --host box-b >/dev/null
python3 "$CRAFT" base c 10 --host box-c >/dev/null

"$DLBENCH" store add "$URL" a/night-00* a/night-01* >add.out 2>add.err
ok "store add on PostgreSQL: exit 0 ($(cat add.err))" [ $? -eq 0 ]
ok "20 runs added ($(cat add.out))" grep -q "20 runs added (60 configuration rows)" add.out
"$DLBENCH" store add "$URL" a/night-00* >again.out 2>&1
ok "again: nothing added" grep -q " 0 runs added (0 configuration rows), 10 known" again.out

"$DLBENCH" store add "$URL" b >b.out 2>b.err &
pb=$!
"$DLBENCH" store add "$URL" c >c.out 2>c.err &
pc=$!
wait $pb; rb=$?
wait $pc; rc=$?
ok "two writers at once: both exit 0 ($(cat b.err c.err))" [ "$rb$rc" = 00 ]
"$DLBENCH" store info "$URL" --format json >info.json
ok "40 runs, 120 rows" [ "$(json info.json "(d['runs'], d['rows'], d['engine'])")" = "(40, 120, 'postgresql')" ]

DLBENCH_TEST_STORE_STALL=$PWD/stalled "$DLBENCH" store add "$URL" a/night-020 a/night-021 >k.out 2>&1 &
pk=$!
i=0
while [ ! -e stalled ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
ok "a writer inside its transaction" [ -e stalled ]
kill -KILL $pk
{ wait $pk; } 2>/dev/null
sleep 1
"$DLBENCH" store info "$URL" --format json >info2.json
ok "killed: nothing of its transaction kept" [ "$(json info2.json "d['runs']")" = 40 ]
"$DLBENCH" store add "$URL" a/night-02[0-3] >k2.out 2>&1
ok "its runs added afterwards, whole ($(cat k2.out))" grep -q "4 runs added (12 configuration rows), 0 known" k2.out

"$DLBENCH" changes "$URL" --format json >c1.json 2>c1.err
ok "changes on PostgreSQL: a candidate ($(cat c1.err))" \
    [ "$(json c1.json "[(g['alert']['state'], len(g['members'])) for g in d['groups'] if g['alert']]")" = "[('candidate', 1)]" ]
"$DLBENCH" store add "$URL" a/night-024 >/dev/null 2>&1
"$DLBENCH" changes "$URL" >/dev/null 2>&1
ok "confirmed by a further run: exit 1" [ $? -eq 1 ]
"$DLBENCH" alerts "$URL" ack 1 --note mine >/dev/null 2>&1
"$DLBENCH" changes "$URL" >/dev/null 2>&1
ok "acknowledged: exit 0" [ $? -eq 0 ]
"$DLBENCH" thresholds "$URL" set ok "*" 12 >/dev/null 2>&1
"$DLBENCH" thresholds "$URL" --format json >t.json
ok "a threshold stored" [ "$(json t.json "d[0]['slowdown']")" = 0.12 ]
"$DLBENCH" dashboard "$URL" --out site >dash.out 2>&1
ok "the dashboard from PostgreSQL ($(cat dash.out))" grep -q 'class="cp"' site/suite-ok.html

"$DLBENCH" store info "postgresql:///nosuchdb?host=/nonexistent-dir&port=1" >/dev/null 2>bad.err
rc=$?
ok "a server that cannot be reached: exit 2 ($(cat bad.err))" [ $rc -eq 2 ]
ok "with libpq's reason" grep -q "cannot connect to the PostgreSQL server" bad.err
"$DLBENCH" store info "postgresql://me:secret@/nosuchdb?host=/nonexistent-dir" >/dev/null 2>pw.err
ok "the password is never printed" sh -c "! grep -q secret pw.err"

finish
