"""Analysis helper of results/idle-step-2026-12-05-f (see README)."""

import json
import sys


def load(p):
    with open(p) as fh:
        return {d["id"]: d for d in map(json.loads, fh) if d.get("event") == "request"}


B = load(sys.argv[1])
S = load(sys.argv[2])
A = load(sys.argv[3])
n = int(sys.argv[4]) if len(sys.argv) > 4 else 25
ids = sorted(B)
for i in range(0, len(ids), n):
    g = [k for k in ids[i : i + n] if k in A]
    b = sum(B[k]["observed_s"] for k in g)
    s = sum(S[k]["observed_s"] for k in g)
    a = sum(A[k]["observed_s"] for k in g)
    print(
        g[0][-4:],
        "load %.1f" % (sum(S[k]["load_self"] for k in g) / len(g)),
        f"S/B {s / b:.3f}  A/B {a / b:.3f}",
        f"spec {sum(A[k]['backend'] == 'speculative' for k in g)}/{len(g)}",
    )
