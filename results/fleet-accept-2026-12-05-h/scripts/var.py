# ruff: noqa  -- an analysis script, kept as it ran
import json, gzip, collections, statistics as st, math, re, sys
from gateway.core.protocol import request_view
from gateway.core.classify import features
from gateway.settings import Settings
cfg = Settings().classifier_config()
d = json.load(gzip.open("runs/h/dataset.json.gz"))
rows = {}
for w in sorted({r["w"] for r in d}):
    for line in open(f"runs/{w}.jsonl"):
        r = json.loads(line); rows[(w, r["id"])] = r
recs = []
for r in d:
    if r["w"] not in ("azure-code-a", "azure-code-b"): continue
    raw = rows[(r["w"], r["id"])]; v = request_view(raw["endpoint"], raw["body"]); f = features(v, cfg)
    ask = " ".join(re.sub(r"`[^`]*`|\d+", "", v.instruction.lower()).split()[-12:])
    recs.append(dict(r, kindc=f.copy_kind, ask=ask[:40], lt=math.log(r["tps"]), lo=round(math.log2(max(r["out"], 8)))))
def within(keyf, sel):
    g = collections.defaultdict(list)
    for x in recs:
        if sel(x): g[keyf(x)].append(x["lt"])
    n = sum(len(v) for v in g.values())
    return sum(sum((y - st.mean(v)) ** 2 for y in v) for v in g.values()) / n, len(g)
for name, sel in (("code/edit", lambda x: x["kindc"] == "edit"), ("new", lambda x: x["kindc"] == "new"), ("ref", lambda x: x["kindc"] == "ref")):
    print(name, "total var %.4f" % within(lambda x: 0, sel)[0],
          "| cls+temp %.4f (%d)" % within(lambda x: (x["cls"], x["temp"]), sel),
          "| +outlen %.4f (%d)" % within(lambda x: (x["cls"], x["temp"], x["lo"]), sel),
          "| +ask %.4f (%d)" % within(lambda x: (x["cls"], x["temp"], x["ask"]), sel),
          "| +ask+outlen %.4f (%d)" % within(lambda x: (x["cls"], x["temp"], x["ask"], x["lo"]), sel))
