# ruff: noqa  -- an analysis script
"""Bound on a mid-stream correction: per request of a bench run, what moving it to the other side after its
first K decode steps would save, net of the re-prefill (prompt + text so far) on the destination.

Timing: each request's own decode step time where it ran ((e2e - ttft) / decode steps); on the other side the
median step time of the requests that ran there within +-WIN s of its send time (the cell median if none).
Re-prefill: the emulator profile's forward pass over prompt + generated tokens (compute-bound, ~24 us a token) plus
the side's step overhead; queueing on the destination and the slowdown of its co-runners are NOT counted
(optimistic). Steps on the n-gram side: the request's exact per-step token counts (emulator physics, traj.py).
"oracle": move iff it saves (knows everything). "rule": spec -> baseline iff the first K steps' tokens/step x
baseline step < spec step (observed acceptance, true remaining length); no reverse move (a baseline stream shows
no acceptance)."""
import json, gzip, sys, statistics as st, bisect
from gateway.emulator.costs import SeqWork, forward_time
from gateway.emulator.profiles import get_profile
prof = get_profile("h200-ngram")
DEBUG = '--debug' in sys.argv; OWN = '--own' in sys.argv; ORC = '--orc' in sys.argv
T = json.load(gzip.open("runs/i/traj.json.gz"))
WIN = 5.0
OVH = {"baseline": prof.step_overhead_s, "speculative": prof.spec_step_overhead_s}

def reprefill(tokens, side):
    return forward_time(prof.target, prof.gpu, [SeqWork(tokens, tokens)]) + OVH[side]

def analyse(path, w, Ks=(0, 8, 16), free=False, load=False):
    D = json.load(gzip.open(path)); pol = D["policies"]["adaptive"]; reqs = pol["requests"]
    nins = {s: sum(1 for f in D["fleet"] if f == s) for s in ("baseline", "speculative")}
    sm = pol["learned"]["learner"]["step_models"]; delta = {s: sm[s]["per_request_s"] for s in sm}
    spans = {s: [(r["sent_s"], r["sent_s"] + r["e2e_s"]) for r in reqs if r["backend"] == s] for s in nins}
    def co(side, t):  # others running on one instance of `side` at t (the side's mean per instance)
        return sum(1 for a, b in spans[side] if a <= t < b) / nins[side]
    tau = {"baseline": [], "speculative": []}
    for r in reqs:
        if r["engine_steps"] > 1:
            tau[r["backend"]].append((r["sent_s"], (r["e2e_s"] - r["ttft_s"]) / (r["engine_steps"] - 1)))
    for s in tau: tau[s].sort()
    med = {s: st.median(v for _, v in tau[s]) for s in tau}
    def local(side, t):
        xs = tau[side]; i = bisect.bisect_left(xs, (t - WIN,)); j = bisect.bisect_right(xs, (t + WIN, 9))
        vals = [v for _, v in xs[i:j]]
        return st.median(vals) if vals else med[side]
    N = len(reqs); mean = sum(r["e2e_s"] for r in reqs) / N
    res = {"mean": mean, "N": N, "tau": med}
    for K in Ks:
        save_o = save_r = save_os = 0.0; n_o = n_r = eligible = 0; wrong = 0
        for r in reqs:
            t = T[w][r["id"]]; X = r["backend"]; Y = "baseline" if X == "speculative" else "speculative"
            steps = t["steps"]; L = t["L"]
            nX = len(steps) if X == "speculative" else L - 1  # decode steps on X
            if nX < 1: continue
            tX = (r["e2e_s"] - r["ttft_s"]) / nX if OWN else local(X, r["sent_s"]); tY = local(Y, r["sent_s"])
            stayX_total = nX * tX
            nY_total = (L - 1) if Y == "baseline" else len(steps)
            if nY_total * tY < stayX_total: wrong += 1
            if nX <= K or (t["nm"] and K > 0): continue
            eligible += 1
            g = 1 + (sum(steps[:K]) if X == "speculative" else K)  # tokens generated after K steps on X
            stay = (nX - K) * tX
            if Y == "baseline":
                leftY = (L - g) * tY
            else:  # n-gram steps from position g on: the same trajectory's steps past g tokens
                acc, i = 1, 0
                while i < len(steps) and acc < g: acc += steps[i]; i += 1
                leftY = (len(steps) - i) * tY
            cost = 0.0 if (free or K == 0) else reprefill(t["P"] + g, Y)
            gain = stay - (leftY + cost)
            if load:  # first order: the prefill stalls the destination's co-runners, each moved step slows them,
                # each step gone relieves the source's co-runners
                tm = r["sent_s"] + r["ttft_s"] + K * tX
                cY, cX = co(Y, tm), max(co(X, tm) - 1.0 / nins[X], 0.0)
                nleftY = leftY / tY
                gain -= cY * (cost + nleftY * delta[Y]) - cX * (nX - K) * delta[X]
            if gain > 0: save_o += gain; n_o += 1
            if gain > 0 and X == "speculative":
                save_os += gain
                if ORC and K == 8: print(f"  ORC {r['id']} {t['kind']} T={t['temp']} P={t['P']} L={L} g={g} tpsK={(g-1)/K:.2f} rest={(L-g)/max(len(steps)-K,1):.2f} tX={tX*1e3:.1f} tY={tY*1e3:.1f} gain={gain*1e3:+.1f}ms")
            if X == "speculative" and K > 0:
                tps_k = (g - 1) / K
                pred_stay = (L - g) / max(tps_k, 1.0) * tX
                pred_move = (L - g) * tY + reprefill(t["P"] + g, Y)
                if load:
                    tm = r["sent_s"] + r["ttft_s"] + K * tX
                    cY, cX = co(Y, tm), max(co(X, tm) - 1.0 / nins[X], 0.0)
                    pred_move += cY * (reprefill(t["P"] + g, Y) + (L - g) * delta[Y]) - cX * (L - g) / max(tps_k, 1.0) * delta[X]
                if pred_move < pred_stay:
                    save_r += gain; n_r += 1
                    if DEBUG and K == 8: print(f"  {r['id']} {t['kind']} T={t['temp']} P={t['P']} L={L} g={g} tpsK={tps_k:.2f} rest={(L-g)/max(len(steps)-K,1):.2f} tX={tX*1e3:.1f} tY={tY*1e3:.1f} gain={gain*1e3:+.1f}ms")
        res[K] = dict(oracle_ms=save_o / N * 1e3, oracle_pct=save_o / N / mean * 100, moved=n_o,
                      eligible=eligible, wrong_side=wrong, rule_ms=save_r / N * 1e3, oracle_spec_ms=save_os / N * 1e3, rule_moved=n_r)
    return res

if __name__ == "__main__":
    R = "results/fleet-accept-2026-12-05-h/raw/"
    cells = [("azure-code-b--1+1", "azure-code-b"), ("azure-code-a--2+2", "azure-code-a"),
             ("azure-code-b-x2--4+4", "azure-code-b-x2"), ("azure-conv-b--1+1", "azure-conv-b")]
    free = "--free" in sys.argv; load = "--load" in sys.argv
    for cell, w in cells:
        for seed in (21, 22, 23, 24):
            res = analyse(R + f"br1--{cell}--s{seed}.json.gz", w, free=free, load=load)
            line = f"{cell:22s} s{seed} mean {res['mean']*1e3:6.1f} ms  tau b/s {res['tau']['baseline']*1e3:.2f}/{res['tau']['speculative']*1e3:.2f} ms"
            for K in (0, 8, 16):
                x = res[K]
                line += f" | K{K}: oracle {x['oracle_ms']:5.2f} ms ({x['oracle_pct']:4.2f}%) n={x['moved']}/{x['eligible']} s->b {x['oracle_spec_ms']:5.2f} rule {x['rule_ms']:+5.2f} ({x['rule_ms']/res['mean']/10:+.2f}%) n={x['rule_moved']}"
            print(line, f"wrong-side {res[0]['wrong_side']}")
