# ruff: noqa  -- a quick analysis script, kept as it ran
"""tpssteps.py WORKLOAD S_LOGS DIAG_LOGS T0 T1 N: for the requests arriving in [T0, T1) s, the n-gram server's real decode
steps (its static run S) against the steps the regime's evidence implies for the same tokens: each (class, bucket)'s
posterior tokens a step as the DEBUG `regime_update` of decision N (diag-regime-log.patch) logged it."""
import json, glob, collections, sys
wlf, sdir, ddir, t0, t1, n0 = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
wl = {json.loads(l)["id"]: json.loads(l)["t"] for l in open(wlf)}
S = {e["id"]: e for e in (json.loads(l) for l in open(glob.glob(sdir + "/gateway-*.log")[0]) if '"event":"request"' in l)}
A = [json.loads(l) for l in open(glob.glob(ddir + "/gateway-adaptive.log")[0])]
tps = next(e["tps"] for e in A if e.get("event") == "regime_update" and e["n"] >= n0)
acc = collections.defaultdict(lambda: [0, 0, 0.0, 0])
for e in A:
    if e.get("event") != "request" or not (t0 <= wl[e["id"]] < t1):
        continue
    s, key = S[e["id"]], f'{e["class"]}/{e["temperature"]}'
    p = tps.get(key)
    a = acc[key]; a[0] += s["completion_tokens"]; a[1] += s["engine_steps"]; a[3] += 1
    a[2] += s["completion_tokens"] / p if p else s["engine_steps"]
T = [0, 0, 0.0]
for k, a in sorted(acc.items()):
    print(f"| {k} | {a[3]} | {a[0]} | {a[1]} ({a[0]/a[1]:.2f}) | {a[2]:.0f} ({tps.get(k)}) |")
    T[0] += a[0]; T[1] += a[1]; T[2] += a[2]
print(f"| all | | {T[0]} | {T[1]} ({T[0]/T[1]:.3f}) | {T[2]:.0f} ({T[0]/T[2]:.3f}) |")
