#!/usr/bin/env python3
"""Nightly runs crafted from one real run, for the tests of the results
store: each night is the base run's results.json with its start time,
host, run directory and commit set, and every ok record's step times
scaled by that night's factor: 1, times 1 + STEP from night AT on for the
configurations named (all when none), times a log-normal draw of NOISE
(seeded, so every run of a test sees the same nights).

usage: craft-nights.py BASE OUT NIGHTS [--at N --step F] [--noise F]
         [--seed N] [--host NAME] [--first N] [--commits FILE]
         [--config ID]... [--start YYYY-MM-DD]
Commits are the SHA-1 of "night I" unless --commits names a file with one
commit per line (night i takes line i)."""
import argparse, copy, datetime, hashlib, json, math, os, random

p = argparse.ArgumentParser()
p.add_argument('base'); p.add_argument('out'); p.add_argument('nights', type=int)
p.add_argument('--at', type=int, default=10 ** 9); p.add_argument('--step', type=float, default=0)
p.add_argument('--noise', type=float, default=0.007); p.add_argument('--seed', type=int, default=1)
p.add_argument('--host', default='ci-1'); p.add_argument('--first', type=int, default=0)
p.add_argument('--commits'); p.add_argument('--config', action='append')
p.add_argument('--start', default='2026-05-01')
a = p.parse_args()
rng = random.Random(a.seed)
base = json.load(open(os.path.join(a.base, 'results.json')))
commits = open(a.commits).read().split() if a.commits else None
t0 = datetime.datetime.strptime(a.start, '%Y-%m-%d') + datetime.timedelta(hours=2, minutes=17)
for i in range(a.first, a.first + a.nights):
    d = copy.deepcopy(base)
    c = d['context']
    c['start_utc'] = (t0 + datetime.timedelta(days=i)).strftime('%Y-%m-%dT%H:%M:%SZ')
    c['host'] = a.host
    name = 'night-%03d' % i
    c['run_dir'] = os.path.join(a.out, name)
    sha = commits[i] if commits else hashlib.sha1(b'night %d' % i).hexdigest()
    c.setdefault('dlbench', {})['git_commit'] = sha
    c.pop('dlbench.git_commit', None)
    for r in d['records']:
        if r['status'] != 'ok':
            continue
        f = 1 + a.step if i >= a.at and (not a.config or r['id'] in a.config) else 1.0
        f *= math.exp(rng.gauss(0, a.noise))
        r['samples'] = [x * f for x in r.get('samples', [])]
        for k in ('median', 'mean', 'min', 'max', 'p5', 'p95', 'p99', 'ci_lo', 'ci_hi', 'stddev'):
            if k in r.get('stats', {}):
                r['stats'][k] *= f
        r['throughput'] = {k: v / f for k, v in r.get('throughput', {}).items()}
    os.makedirs(os.path.join(a.out, name), exist_ok=True)
    json.dump(d, open(os.path.join(a.out, name, 'results.json'), 'w'), indent=1)
