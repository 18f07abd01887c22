# ruff: noqa  -- a quick analysis script, kept as it ran
"""The re-judgement tables of results/fleet-judge-2026-12-06-m from its raw/ bench files.

python judge.py RAW_DIR[,ROUND_J_RAW_DIR] [TAG]    # TAG: the adaptive runs' tag prefix (main: TAG-sN)

Round j's files (TAG--WINDOW--sS.json.gz, all 2 + 2) count as: `peer` -> its repeats `peerjS`, `static`/`static4b` ->
the 4 x baseline fleet, `static4s` -> 4 x speculative; its other tags are ignored.
"""
import glob, gzip, json, os, re, statistics as st, sys
D = sys.argv[1].split(","); TAG = sys.argv[2] if len(sys.argv) > 2 else "main"
runs = {}
for p in [p for d in D for p in glob.glob(d + "/*.json*")]:
    m = re.match(r"(.+?)--(.+?)--(.+?)\.json", os.path.basename(p))
    if not m: continue
    tag, w, fleet = m.groups()
    fleet = fleet.replace("_", ",")
    if re.fullmatch(r"s\d", fleet):  # round j's naming
        tag = {"peer": "peerj" + fleet[1], "static": "static4b", "static4b": "static4b", "static4s": "static4s"}.get(tag)
        fleet = "2xbaseline,2xspeculative"
        if tag is None: continue
    with (gzip.open(p, "rt") if p.endswith(".gz") else open(p)) as fh:
        j = json.load(fh)
    for name, v in j["policies"].items():
        reqs = v["requests"]; sm = v["summary"]
        hits = q = 0.0
        for em in v["emulator"]:
            for s in em.values():
                hits += s.get("prefix_cache_hits", 0); q += s.get("prefix_cache_queries", 0)
        runs[(tag, w, fleet, name)] = dict(e2e=sm["mean_e2e_s"], ttft=sm["mean_ttft_s"], errors=sm["errors"],
            spec=sum(r.get("backend") == "speculative" for r in reqs) / max(len(reqs), 1),
            perr=v["prediction"].get("median_error_ratio"), hit=hits / max(q, 1))

def f(x, n=3): return "–" if x is None else f"{x:.{n}f}"
FLEETS = {"2+2": "2xbaseline,2xspeculative", "1+1": "baseline,speculative", "4+4": "4xbaseline,4xspeculative"}
cells = sorted({(w, fl) for (t, w, fl, n) in runs if t.startswith(TAG + "-s")}, key=lambda c: (c[1], c[0]))
print("| cell | fleet | adaptive s1, s2, s3 (median) | → spec | TTFT | pred. err | hit | best peer: today; round j (median of all) | ÷ peer today; ÷ median of all | best static | ÷ static | hindsight | ÷ hindsight |")
print("|" + "---|" * 13)
for w, fl in cells:
    ad = [runs.get((f"{TAG}-s{s}", w, fl, "adaptive")) for s in (1, 2, 3)]
    vals = [a["e2e"] for a in ad if a]; med = st.median(vals) if vals else None
    peers, today = {}, {}
    for (t, ww, ffl, n), r in runs.items():
        if ww == w and ffl == fl and ("router" in n):
            peers.setdefault(n, []).append(r["e2e"])
            if not t.startswith("peerj"):
                today.setdefault(n, []).append(r["e2e"])
    pbest = min(((st.median(today[n]), n, today[n]) for n in today), default=(None, "", []))
    allp = sorted(peers.get(pbest[1], []))
    jruns = [r["e2e"] for (t, ww, ffl, n), r in sorted(runs.items())
             if ww == w and ffl == fl and t.startswith("peerj") and n == pbest[1]]
    pall = st.median(allp) if allp else None
    statics = {n: r["e2e"] for (t, ww, ffl, n), r in runs.items() if ww == w and ffl == fl and n.startswith("least_loaded@")}
    sbest = min(((v, n) for n, v in statics.items()), default=(None, ""))
    hind = [r["e2e"] for (t, ww, ffl, n), r in runs.items() if ww == w and ffl == fl and n == "hindsight"]
    h = hind[0] if hind else None
    def r_(a, b): return None if a is None or b is None else a / b
    print(f"| {w} | {[k for k, v in FLEETS.items() if v == fl][0]} | {', '.join(f(v) for v in vals)} ({f(med)}) "
          f"| {', '.join(f(a['spec'], 2) for a in ad if a)} | {', '.join(f(a['ttft']) for a in ad if a)} "
          f"| {', '.join(f(a['perr'], 2) for a in ad if a)} | {', '.join(f(a['hit']) for a in ad if a)} "
          f"| {pbest[1].replace('-router', '')}: {', '.join(f(v) for v in pbest[2])}; {', '.join(f(v) for v in jruns) or '–'} ({f(pall)}) | {f(r_(med, pbest[0]))}; {f(r_(med, pall))} "
          f"| {f(sbest[0])} ({sbest[1].replace('least_loaded@', '')}) | {f(r_(med, sbest[0]))} | {f(h)} | {f(r_(med, h))} |")
print(f"\nerrors over all runs: {sum(r['errors'] for r in runs.values())}; runs: {len(runs)}")
for (t, w, fl, n), r in sorted(runs.items()):
    if "router" in n:
        print(f"  peer {w} {fl} {n} {r['e2e']:.4f} ttft {r['ttft']:.4f} hit {r['hit']:.3f} spec {r['spec']:.2f}")
