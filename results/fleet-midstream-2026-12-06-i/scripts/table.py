# ruff: noqa  -- an analysis script, kept as it ran
# the results table: branch (mid) / main per cell and seed, the moves, the moved requests' own change, / best peer
import json, re, statistics as st, gzip, os
AB = "/tmp/w38c-i/ab/"; PEERS = "/work/wt/w38c/results/fleet-accept-2026-12-05-h/raw/"
cells = [("azure-code-a", "2+2"), ("azure-code-b", "1+1"), ("azure-code-b-x2", "4+4"), ("azure-conv-b", "1+1"),
         ("all-creative-conv-a", "1+1"), ("all-structured-code-a", "1+1")]
def load(v, tag, s):
    f = f"{AB}{v}--{tag}--s{s}.json"
    return json.load(open(f))["policies"]["adaptive"] if os.path.exists(f) else None
print("| cell | main, seeds 22–24 (s) | branch, moves on (s) | branch ÷ main (median; per seed) | moves (per seed) | moved requests' own change, ms of the cell mean (per seed) | best peer (s, seed 22, round h) | main ÷ peer | **branch ÷ peer** (median; per seed) | to speculative main / branch |")
print("|---|---|---|---|---|---|---|---|---|---|")
for w, f in cells:
    tag = f"{w}--{f}"; seeds = [s for s in (22, 23, 24) if load("main", tag, s) and load("mid", tag, s)]
    if not seeds: continue
    m = [load("main", tag, s) for s in seeds]; b = [load("mid", tag, s) for s in seeds]
    me = [x["summary"]["mean_e2e_s"] for x in m]; be = [x["summary"]["mean_e2e_s"] for x in b]
    r = [y / x for x, y in zip(me, be)]
    moves, own = [], []
    for s, mm, bb in zip(seeds, m, b):
        log = open(f"{AB}mid--{tag}--s{s}-logs/gateway-adaptive.log").read()
        ids = set(re.findall(r'"midstream_move","id":"([^"]+)"', log)); moves.append(len(ids))
        A = {q["id"]: q for q in mm["requests"]}; B = {q["id"]: q for q in bb["requests"]}
        own.append(sum(B[i]["e2e_s"] - A[i]["e2e_s"] for i in ids) / len(bb["requests"]) * 1e3)
    peer = None
    pf = f"{PEERS}peers--{tag}.json.gz"
    if os.path.exists(pf):
        P = json.load(gzip.open(pf))["policies"]
        peer = min((p["summary"]["mean_e2e_s"], n) for n, p in P.items() if ":" in n)
    sp = lambda x: x["summary"]["routed"]["speculative"] / x["summary"]["requests"]
    row = [f"{w} {f}", ", ".join(f"{x:.4f}" for x in me), ", ".join(f"{x:.4f}" for x in be),
           f"**{st.median(r):.3f}** ({', '.join(f'{x:.3f}' for x in r)})", ", ".join(map(str, moves)),
           ", ".join(f"{x:+.2f}" for x in own)]
    if peer:
        row += [f"{peer[0]:.4f} ({peer[1]})", f"{st.median(me) / peer[0]:.3f}",
                f"**{st.median(be) / peer[0]:.3f}** ({', '.join(f'{x / peer[0]:.3f}' for x in be)})"]
    else:
        row += ["–", "–", "–"]
    row.append(f"{min(map(sp, m)):.2f}–{max(map(sp, m)):.2f} / {min(map(sp, b)):.2f}–{max(map(sp, b)):.2f}")
    print("| " + " | ".join(row) + " |")
