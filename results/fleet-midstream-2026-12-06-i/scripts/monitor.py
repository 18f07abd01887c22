# ruff: noqa  -- an analysis script
"""A monitor rather than one look: every EVERY decode steps (from step K0 on) a movable request on the n-gram server
is priced again from its last W steps' tokens/step; it moves to the baseline side (once) when staying is predicted
dearer than the re-prefill + the rest at the baseline's pace + the first-order load terms (bound.py's). Remaining
length: LEN=true (the truth, optimistic) or LEN=lindy (as many more as it has made, capped by max_tokens - made).
Realized gain priced as bound.py prices the oracle (local median step times)."""
import json, gzip, sys, os, statistics as st, bisect
sys.path.insert(0, "runs/i")
from bound import reprefill, T, WIN
R = "results/fleet-accept-2026-12-05-h/raw/"
EVERY = int(os.environ.get("EVERY", 8)); K0 = int(os.environ.get("K0", 8)); W = int(os.environ.get("W", 8))
LEN = os.environ.get("LEN", "true"); MARGIN = float(os.environ.get("MARGIN", 0.0))
EXCL = set(os.environ.get("EXCL", "").split(","))
MT = {}
for w in ("azure-code-a", "azure-code-b", "azure-code-b-x2", "azure-conv-b", "all-structured-code-a"):
    for line in open(f"runs/{w}.jsonl"):
        r = json.loads(line); MT[(w, r["id"])] = r["body"].get("max_tokens") or 10**6

def run(path, w, prefix="br1"):
    D = json.load(gzip.open(path)); pol = D["policies"]["adaptive"]; reqs = pol["requests"]
    nins = {s: sum(1 for f in D["fleet"] if f == s) for s in ("baseline", "speculative")}
    sm = pol["learned"]["learner"]["step_models"]; delta = {s: sm[s]["per_request_s"] for s in sm}
    spans = {s: [(r["sent_s"], r["sent_s"] + r["e2e_s"]) for r in reqs if r["backend"] == s] for s in nins}
    co = lambda side, t: sum(1 for a, b in spans[side] if a <= t < b) / nins[side]
    tau = {s: sorted((r["sent_s"], (r["e2e_s"] - r["ttft_s"]) / (r["engine_steps"] - 1)) for r in reqs if r["backend"] == s and r["engine_steps"] > 1) for s in nins}
    med = {s: st.median(v for _, v in tau[s]) for s in tau}
    def local(side, t):
        xs = tau[side]; i = bisect.bisect_left(xs, (t - WIN,)); j = bisect.bisect_right(xs, (t + WIN, 9))
        vals = [v for _, v in xs[i:j]]; return st.median(vals) if vals else med[side]
    N = len(reqs); mean = sum(r["e2e_s"] for r in reqs) / N; tot = 0.0; moved = 0; lost = 0
    for r in reqs:
        t = T[w][r["id"]]
        if r["backend"] != "speculative" or t["nm"] or r["id"] in EXCL: continue
        steps, L = t["steps"], t["L"]; tX = local("speculative", r["sent_s"]); tY = local("baseline", r["sent_s"])
        k = K0
        while k < len(steps):
            g = 1 + sum(steps[:k]); wtps = sum(steps[k - W:k]) / W
            rem = (L - g) if LEN == "true" else max(min(MT[(w, r["id"])] - g, g), 1)
            tm = r["sent_s"] + r["ttft_s"] + k * tX
            cY, cX = co("baseline", tm), max(co("speculative", tm) - 1.0 / nins["speculative"], 0.0)
            cost = reprefill(t["P"] + g, "baseline")
            pstay = rem / max(wtps, 1.0) * tX
            pmove = rem * tY + cost + cY * (cost + rem * delta["baseline"]) - cX * rem / max(wtps, 1.0) * delta["speculative"]
            if pmove * (1 + MARGIN) < pstay:
                stay = (len(steps) - k) * tX; move = (L - g) * tY + cost
                gain = stay - move - (cY * (cost + (L - g) * delta["baseline"]) - cX * (len(steps) - k) * delta["speculative"])
                tot += gain; moved += 1; lost += gain < 0
                break
            k += EVERY
    return tot / N * 1e3, tot / N / mean * 100, moved, lost

SEEDS = [int(x) for x in os.environ.get("SEEDS", "21 22 23 24").split()]
cells = [("azure-code-b--1+1", "azure-code-b"), ("azure-code-a--2+2", "azure-code-a"),
         ("azure-code-b-x2--4+4", "azure-code-b-x2"), ("azure-conv-b--1+1", "azure-conv-b")]
for cell, w in cells:
    out = [run(R + f"br1--{cell}--s{s}.json.gz", w) for s in SEEDS]
    print(f"{cell:22s}", "  ".join(f"{ms:+5.2f}ms {pct:+.2f}% n={n} lost={l}" for ms, pct, n, l in out))
