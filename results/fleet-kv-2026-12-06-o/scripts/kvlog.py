# ruff: noqa  -- a quick analysis script, kept as it ran
"""From gateway access logs (fleet runs): each request's decode step against its server's batch and that batch's KV
tokens (prompt + generated so far of every request on the same instance, time-averaged over its decode), and the
prompt tokens other requests prefilled there during it. Least squares step ~ a + b*n + c*kv + d*prefill/steps per
role; observed/predicted decode by KV bin."""
import gzip, json, sys, datetime as dt
import numpy as np

def load(path):
    op = gzip.open if path.endswith(".gz") else open
    rows = [json.loads(l) for l in op(path, "rt") if '"event":"request"' in l]
    out = []
    for r in rows:
        if r.get("ttft_s") is None or not r.get("engine_steps"):
            continue
        end = dt.datetime.fromisoformat(r["time"].replace("Z", "+00:00")).timestamp()
        start = end - r["observed_s"]
        out.append(dict(r, start=start, first=start + r["ttft_s"], end=end))
    t0 = min(r["start"] for r in out)
    for r in out:
        r["start"] -= t0; r["first"] -= t0; r["end"] -= t0
    return sorted(out, key=lambda r: r["start"])

def ctx_at(o, t):
    """o's KV tokens at time t (0 outside [start, end]); generated tokens grow linearly over its decode."""
    if t < o["start"] or t > o["end"]:
        return 0.0, 0
    gen = 0.0 if t < o["first"] else o["completion_tokens"] * (t - o["first"]) / max(o["end"] - o["first"], 1e-9)
    return o["prompt_tokens"] + gen, 1

def features(r, rows, k=20):
    a, b = r["first"], r["end"]
    if b - a <= 0:
        return None
    same = [o for o in rows if o["instance"] == r["instance"] and o is not r and o["end"] > a and o["start"] < b]
    ts = [a + (b - a) * (i + 0.5) / k for i in range(k)]
    kv = n = 0.0
    for t in ts:
        for o in same:
            c, m = ctx_at(o, t)
            kv += c / k; n += m / k
    own = r["prompt_tokens"] + r["completion_tokens"] / 2
    pre = 0.0  # others' prompt tokens prefilled inside r's decode window (prefill spread over their ttft)
    for o in same:
        lo, hi = max(o["start"], a), min(o["first"], b)
        if hi > lo:
            pre += (o["prompt_tokens"] - o.get("cached_tokens", 0)) * (hi - lo) / max(o["first"] - o["start"], 1e-9)
    return n, kv, own, pre

def main(paths):
    data = {"baseline": [], "speculative": []}
    for p in paths:
        rows = load(p)
        ids = sorted(r["id"] for r in rows); third = {i: k * 3 // len(ids) for k, i in enumerate(ids)}
        for r in rows:
            f = features(r, rows)
            if f is None or r["engine_steps"] < 8:
                continue
            steps = r["engine_steps"] - 1
            obs_dec = r["observed_s"] - r["ttft_s"]
            pred_dec = r["predicted_s"] - r["predicted_ttft_s"]
            data[r["backend"]].append((steps, obs_dec, pred_dec, *f, third[r["id"]], r["completion_tokens"],
                                       r["predicted_output_tokens"]))
    for role, d in data.items():
        a = np.array(d)
        steps, obs, pred, n, kv, own, pre = (a[:, i] for i in range(7))
        step = obs / steps
        X = np.column_stack([np.ones_like(n), n, kv + own, pre / steps])
        coef, *_ = np.linalg.lstsq(X, step, rcond=None)
        X2 = np.column_stack([np.ones_like(n), n, pre / steps])
        coef2, *_ = np.linalg.lstsq(X2, step, rcond=None)
        print(f"{role}: {len(a)} requests; step = {coef[0]*1e3:.2f} ms + {coef[1]*1e3:.3f} ms/req + "
              f"{coef[2]*1e9:.1f} ns/KV token + {coef[3]:.2e} s/prefilled token per step"
              f"   (without KV: {coef2[0]*1e3:.2f} + {coef2[1]*1e3:.3f}/req + {coef2[2]:.2e}/tok)")
        print(f"  median batch {np.median(n+1):.1f}, median batch KV {np.median(kv+own)/1e3:.1f}k, median own ctx "
              f"{np.median(own)/1e3:.1f}k; KV per running request {np.sum(kv+own)/np.sum(n+1)/1e3:.1f}k")
        for lo, hi in ((0, 2e4), (2e4, 4e4), (4e4, 7e4), (7e4, 1e9)):
            m = (kv + own >= lo) & (kv + own < hi)
            if m.sum():
                print(f"  batch KV {lo/1e3:.0f}-{hi/1e3:.0f}k: n {m.sum():3d} decode obs/pred {obs[m].sum()/pred[m].sum():.2f}"
                      f"  step obs {1e3*np.median(step[m]):.2f} ms, out obs/pred {a[m,8].sum()/a[m,9].sum():.2f}")
        for t in range(3):
            m = a[:, 7] == t
            print(f"  third {t}: n {m.sum():3d} decode obs/pred {obs[m].sum()/pred[m].sum():.2f} batch KV "
                  f"{np.median(kv[m]+own[m])/1e3:.1f}k batch {np.median(n[m]+1):.1f} out obs/pred {a[m,8].sum()/a[m,9].sum():.2f}")

if __name__ == "__main__":
    main(sys.argv[1:])
