# ruff: noqa  -- a quick analysis script, kept as it ran
"""Median |pred - obs| / obs (and signed) of e2e by the context on the request's server when it started (reconstructed
from the logs as in kvlog.py, the request's own prompt included), pooled over the logs given, per role."""
import sys, statistics as st
sys.path.insert(0, __import__("os").path.dirname(__file__))
from kvlog import load, ctx_at

bins = ((0, 2e4), (2e4, 4e4), (4e4, 7e4), (7e4, 1e9))
acc = {}
for path in sys.argv[1:]:
    rows = load(path)
    for r in rows:
        kv = sum(ctx_at(o, r["start"])[0] for o in rows if o["instance"] == r["instance"] and o is not r) + r["prompt_tokens"]
        b = next(i for i, (lo, hi) in enumerate(bins) if lo <= kv < hi)
        e = (r["predicted_s"] - r["observed_s"]) / r["observed_s"]
        acc.setdefault((r["backend"], b), []).append(e)
for (role, b), es in sorted(acc.items()):
    lo, hi = bins[b]
    print(f"{role:12s} kv {lo/1e3:3.0f}-{min(hi/1e3, 999):3.0f}k n {len(es):4d} |err| {st.median(abs(e) for e in es):.3f}"
          f" signed {st.median(es):+.3f}")
