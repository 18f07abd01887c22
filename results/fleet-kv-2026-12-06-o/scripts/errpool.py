# ruff: noqa  -- a quick analysis script, kept as it ran
"""Pooled over an arm's runs of a window (gateway logs named TAG--WINDOW--sN-gateway.log.gz): the median e2e error
(|pred - obs| / obs) and its signed median by arrival third."""
import gzip, json, os, re, sys, statistics as st

acc = {}
for path in sys.argv[1:]:
    name = os.path.basename(path)
    m = re.match(r"([a-z]+\d?)\w*?--(.+)--s\d-gateway", name)
    arm = "main" if name.startswith("main") else m.group(1)
    rs = [json.loads(l) for l in gzip.open(path, "rt") if '"event":"request"' in l]
    rs = [r for r in rs if r.get("predicted_s") and r.get("ttft_s") is not None]
    ids = sorted(r["id"] for r in rs); third = {i: k * 3 // len(ids) for k, i in enumerate(ids)}
    for r in rs:
        acc.setdefault((m.group(2), arm, third[r["id"]]), []).append((r["predicted_s"] - r["observed_s"]) / r["observed_s"])
for w in sorted({k[0] for k in acc}):
    for arm in sorted({k[1] for k in acc if k[0] == w}):
        parts = [acc[(w, arm, t)] for t in range(3)]
        allx = [e for p in parts for e in p]
        print(f"{w:11s} {arm:5s} n {len(allx):4d} |err| {st.median(abs(e) for e in allx):.3f}  signed by third "
              + " ".join(f"{st.median(p):+.3f}" for p in parts) + "  |err| by third " + " ".join(f"{st.median(abs(e) for e in p):.3f}" for p in parts))
