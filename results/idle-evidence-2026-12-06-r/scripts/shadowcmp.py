# ruff: noqa  -- a quick analysis script, kept as it ran
"""shadowcmp.py S_LOGS A_LOGS: per class, the n-gram server's real tokens a step (static run S) against the shadow
lookup's read of the same requests (adaptive run A, answered by the baseline), and the predicted tokens a step."""
import glob, json, sys, collections
def load(d):
    out = {}
    for l in open(glob.glob(d + "/gateway-*.log")[0]):
        if '"event":"request"' in l:
            e = json.loads(l); out[e["id"]] = e
    return out
s, a = load(sys.argv[1]), load(sys.argv[2])
acc = collections.defaultdict(lambda: [0, 0, 0.0, 0.0, 0, 0.0])
for i, e in a.items():
    r = s.get(i)
    if not r or "shadow_tps" not in e or e["backend"] != "baseline": continue
    c = acc[e["class"] + "/" + e.get("temperature", "?")]
    c[0] += r["completion_tokens"]; c[1] += r["engine_steps"]
    c[2] += e["completion_tokens"] / e["shadow_tps"] if e["shadow_tps"] > 0 else 0
    c[3] += e["completion_tokens"]; c[4] += 1; c[5] += e.get("predicted_tokens_per_step", 0)
for k, c in sorted(acc.items()):
    print(f"{k:14s} n={c[4]:4d} real tps {c[0]/max(c[1],1):.3f}  shadow tps {c[3]/max(c[2],1e-9):.3f}  ratio {c[0]/max(c[1],1)/(c[3]/max(c[2],1e-9)):.3f}  pred(mean) {c[5]/c[4]:.3f}")
