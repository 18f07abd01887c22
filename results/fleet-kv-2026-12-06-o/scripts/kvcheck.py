# ruff: noqa  -- a quick analysis script, kept as it ran
"""The context the gateway logged at each decision (`kv_tokens`, others' prompts in flight on its server) against the
context reconstructed from the logs over the request's decode (kvlog.py), and the step net of the term at 25 ns a
gateway token against the load, per role."""
import sys, statistics as st
import numpy as np
sys.path.insert(0, __import__("os").path.dirname(__file__))
from kvlog import load, features

KV = 2.54e-8
for path in sys.argv[1:]:
    rows = load(path)
    for role in ("baseline", "speculative"):
        a = []
        for r in rows:
            if r["backend"] != role or r["engine_steps"] < 8:
                continue
            f = features(r, rows)
            if f is None:
                continue
            n, kv, own, pre = f
            step = (r["observed_s"] - r["ttft_s"]) / (r["engine_steps"] - 1)
            logged = r.get("kv_tokens", 0)
            a.append((r["load_self"], logged, kv, own, step, pre / (r["engine_steps"] - 1)))
        a = np.array(a)
        load_, logged, kv, own, step, pre = a.T
        net = step - KV * (logged + own)
        X = np.column_stack([np.ones_like(load_), load_, pre])
        c, *_ = np.linalg.lstsq(X, net, rcond=None)
        print(f"{path.split('/')[0][:30]:30s} {role[:4]} n {len(a)} logged kv mean {logged.mean()/1e3:.1f}k, decode-avg others' kv {kv.mean()/1e3:.1f}k;"
              f" net step = {c[0]*1e3:.2f} ms + {c[1]*1e3:.3f} ms x load + {c[2]:.2e} x prefill tok/step; median net step at load<=2 {1e3*np.median(net[load_<=2]) if (load_<=2).any() else float('nan'):.2f} ms")
