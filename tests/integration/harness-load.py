#!/usr/bin/env python3
"""Run dlbench once and measure what the parent process itself costs.

    harness-load.py DIR DLBENCH ARGS...

runs `DLBENCH ARGS... --out DIR`, watching the parent every few
milliseconds: its resident memory (VmRSS, VmHWM in /proc/PID/status) and
how many configurations the journal holds. Prints one JSON object:

  wall_s        the run, from start to exit, as seen from outside
  configs_s     the configurations' own time: the sum of each record's
                wall_s, which the parent measures from just before fork()
                to the child's reaping, so the child's exec, dynamic
                loading, suite parsing and plugin start-up count as the
                configuration's, not as the harness's
  overhead_s    wall_s - configs_s: everything else (parsing and planning,
                setting up the run directory, starting each child, the
                journal's appends and fsyncs, progress lines, and at the
                end results, selection, plots and reports)
  overhead_share  overhead_s / configs_s
  setup_s, between_s, post_s   the same overhead split: before the first
                configuration, between configurations (summed), after the
                last (each from when journal lines appeared, to the
                sampling period)
  rss_kib       {N: VmRSS when the journal first held N records}
  hwm_kib       the same for VmHWM (the peak so far)
  records, rc   the journal's records and dlbench's exit status
"""
import json
import os
import subprocess
import sys
import time

PERIOD_S = 0.005


def status_kib(pid):
    """VmRSS and VmHWM of pid in KiB, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            text = f.read()
    except OSError:
        return None
    vals = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            vals[key] = int(rest.split()[0])
    return vals if len(vals) == 2 else None


def journal_lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except OSError:
        return 0


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, cmd = sys.argv[1], sys.argv[2:] + ["--out", sys.argv[1]]
    journal = os.path.join(out, "journal.jsonl")
    rss, hwm, seen_at = {}, {}, {}
    start = time.monotonic()
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                             stderr=open(out + ".err", "w"))
    n = 0
    while child.poll() is None:
        st = status_kib(child.pid)
        now = time.monotonic()
        k = journal_lines(journal) if st else n
        if st and k >= n:
            # The memory after record k was appended: what the parent holds
            # with k configurations behind it.
            for j in range(n + 1, k + 1):
                seen_at[j] = now - start
            if k not in rss:
                rss[k], hwm[k] = st["VmRSS"], st["VmHWM"]
            n = k
        time.sleep(PERIOD_S)
    wall = time.monotonic() - start
    recs = []
    if os.path.exists(journal):
        with open(journal) as f:
            recs = [json.loads(line) for line in f if line.strip()]
    walls = [r.get("wall_s", 0.0) for r in recs]
    configs = sum(walls)
    res = {"wall_s": wall, "configs_s": configs, "overhead_s": wall - configs,
           "overhead_share": (wall - configs) / configs if configs else None,
           "records": len(recs), "rc": child.returncode,
           "rss_kib": rss, "hwm_kib": hwm}
    if recs and len(seen_at) == len(recs):
        last = len(recs)
        res["setup_s"] = seen_at[1] - walls[0]
        res["between_s"] = (seen_at[last] - seen_at[1]) - sum(walls[1:])
        res["post_s"] = wall - seen_at[last]
    json.dump(res, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
