# ruff: noqa  -- a quick analysis script, kept as it ran
"""decomp.py WORKLOAD LOGS...: per 10-s arrival window, mean TTFT, mean decode, mean steps and mean e2e per run."""
import glob, json, sys, collections
wl = {json.loads(l)["id"]: json.loads(l)["t"] for l in open(sys.argv[1])}
for d in sys.argv[2:]:
    acc = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0])
    for l in open(glob.glob(d + "/gateway-*.log")[0]):
        if '"event":"request"' not in l: continue
        e = json.loads(l); a = acc[int(wl[e["id"]] // 10)]
        a[0] += 1; a[1] += e["ttft_s"]; a[2] += e["observed_s"] - e["ttft_s"]; a[3] += e.get("engine_steps", 0); a[4] += e["observed_s"]
    print(d.split("/")[-1].split("--")[0], " ".join(f"[{w*10}: ttft {a[1]/a[0]:.3f} dec {a[2]/a[0]:.3f} st {a[3]/a[0]:.0f} ms/st {1e3*a[2]/max(a[3],1):.2f}]" for w, a in sorted(acc.items())[:4]))
