"""Tables 2 and 3 of the README: TTFT split (own prefill / rest) and learned price + TTFT prediction ratio."""
# ruff: noqa: E501, E702, E741, SIM115  (a one-off table script, kept as run)
import glob
import json
import os
import statistics as st
import sys

from gateway.emulator import profiles
from gateway.emulator.costs import SeqWork, forward_time
from gateway.emulator.text import tokenize

P = profiles.get_profile("h200-ngram")
OUT = sys.argv[1] if len(sys.argv) > 1 else "out"
def prefill_s(tokens):
    t, done, chunk = 0.0, 0, P.max_num_batched_tokens
    while done < tokens:
        k = min(chunk, tokens - done)
        t += forward_time(P.target, P.gpu, [SeqWork(k, done + k)]) + P.step_overhead_s
        done += k
    return t
own_cache = {}
def own_of(window):
    if window not in own_cache:
        d = {}
        for line in open(f"wl/{window}.jsonl"):
            it = json.loads(line)
            d[it["id"]] = prefill_s(min(len(tokenize("".join(m["content"] for m in it["body"]["messages"]))), 32768))
        own_cache[window] = d
    return own_cache[window]
def logs(path):
    return [json.loads(l) for l in open(path) if '"event":"request"' in l and '"status":"200"' in l]
cells = [c for c in ["m3-2+2", "m4-2+2", "m3-4+4", "m4-4+4", "m1-4+4"] if os.path.exists(f"{OUT}/{c}-branch.json")]
print("| cell | code | policy | gateway TTFT per run (s) | own prefill (s) | rest: wait + fixed time, per run (s) | own ÷ least_loaded TTFT |")
print("|---|---|---|---|---|---|---|")
for cell in cells:
    w = cell.split("-")[0]
    own = own_of(w)
    ll_ttft = None
    rows = []
    for code, pol in (("main", "adaptive"), ("branch", "adaptive"), ("ttftw", "adaptive"), ("branch", "least_loaded")):
        paths = sorted(glob.glob(f"{OUT}/{cell}-{code}-logs/gateway-{pol}-*.log"))
        if not paths:
            continue
        ttfts, rests, owns = [], [], []
        for p in paths:
            rs = logs(p)
            t = st.mean(r["ttft_s"] for r in rs); o = st.mean(own[r["id"]] for r in rs)
            ttfts.append(t); rests.append(t - o); owns.append(o)
        if pol == "least_loaded":
            ll_ttft = st.median(ttfts)
        rows.append((code if code != "ttftw" else "branch, TTFT weight 1", pol, ttfts, owns[0], rests))
    for code, pol, ttfts, o, rests in rows:
        print(f"| {cell} | {code} | {pol} | {', '.join(f'{x:.3f}' for x in ttfts)} | {o:.3f} | {', '.join(f'{x:.3f}' for x in rests)} | {o / ll_ttft:.2f} |")
print()
print("TABLE3")
for cell in cells:
    out = [cell]
    for code in ("main", "branch"):
        d = json.load(open(f"{OUT}/{cell}-{code}.json"))
        lp = d["policies"]["adaptive"]["learned"]["learner"]["prefill_s_per_token"]
        out.append(f"{lp['baseline']*1e5:.2f} / {lp['speculative']*1e5:.2f} e-5")
    for code in ("main", "branch"):
        rat = []
        for p in sorted(glob.glob(f"{OUT}/{cell}-{code}-logs/gateway-adaptive-*.log")):
            rs = [r for r in logs(p) if r.get("predicted_ttft_s")]
            rat.append(st.mean(r["predicted_ttft_s"] for r in rs) / st.mean(r["ttft_s"] for r in rs))
        out.append(", ".join(f"{x:.2f}" for x in rat))
    print("| " + " | ".join(out) + " |")
