# ruff: noqa  -- an analysis script, kept as it ran
import json, gzip, collections, statistics as st, sys
sys.path.insert(0, "runs/h")
from sig import kind
from gateway.core.protocol import request_view
from gateway.core.classify import features
from gateway.settings import Settings
cfg = Settings().classifier_config()
d = json.load(gzip.open("runs/h/dataset.json.gz"))
rows = {}
for w in sorted({r["w"] for r in d}):
    for line in open(f"runs/{w}.jsonl"):
        r = json.loads(line); rows[(w, r["id"])] = r
g = collections.defaultdict(list)
for r in d:
    raw = rows[(r["w"], r["id"])]; f = features(request_view(raw["endpoint"], raw["body"]), cfg)
    g[(r["cls"], kind(raw["body"], f))].append(r)
for k, rs in sorted(g.items(), key=lambda x: -len(x[1])):
    if len(rs) < 5: continue
    ks = collections.Counter(r["kind"] for r in rs).most_common(3)
    st_ = sum((r["out"]-1)/r["tps"] for r in rs); ros = sum(r["out"]-1 for r in rs)/st_
    print(k, len(rs), "med %.2f ros %.2f" % (st.median(r["tps"] for r in rs), ros), ks)
