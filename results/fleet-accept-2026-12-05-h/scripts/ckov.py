# ruff: noqa  -- an analysis script, kept as it ran
import sys, os
sys.path.insert(0, "runs/h")
import replay
from overlap import ask_overlap
from sig import last_user
from gateway.core.protocol import request_view
def ck(body, f):
    ep = "/v1/chat/completions" if "messages" in body else "/v1/completions"
    v = request_view(ep, body)
    o = ask_overlap(v.instruction, last_user(body))
    b = "none" if o < 0 else ("lo" if o < float(os.environ.get("TH", "0.5")) else "hi")
    return f.copy_kind + ("+" + b if os.environ.get("OVL") else "")
replay.CK = ck
for w in sorted({r["w"] for r in replay.d}):
    m = [replay.score(replay.run(w, 0.5, seed=s)) for s in range(3)]
    print(w, "med|log| %.3f mean %.3f regret %.3f wrong %.2f" % tuple(sum(x[i] for x in m) / 3 for i in range(4)))
