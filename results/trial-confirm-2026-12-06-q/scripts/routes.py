# ruff: noqa  -- a quick analysis script, kept as it ran
"""routes.py TAG_A TAG_B: per cell both tags ran (seed 1 unless both have others), adaptive ÷ the better static for
each, whether the two runs routed every request to the same server (the gateway's access log), and the switches
(`specgate_regime_switches_total`). Cells whose routes are the same differ only by the run's noise."""
import glob, json, os, sys
EV = "/tmp/l37f/ev"
a, b = sys.argv[1:3]
def ratio(tag, key):
    try:
        r = json.load(open(f"{EV}/{tag}--{key}.json"))["policies"]["adaptive"]["runs"][0]["mean_e2e_s"]
        base = key.rsplit("--s", 1)[0] + "--s1"
        bs = json.load(open(f"{EV}/B--{base}.json"))["policies"]["baseline"]["runs"][0]["mean_e2e_s"]
        ss = json.load(open(f"{EV}/S--{base}.json"))["policies"]["speculative"]["runs"][0]["mean_e2e_s"]
        return r / min(bs, ss)
    except (OSError, KeyError, ValueError):
        return None
def route(tag, key):
    try:
        return "".join("S" if json.loads(l).get("backend") == "speculative" else "b"
                       for l in open(f"{EV}/{tag}--{key}-logs/gateway-adaptive.log") if '"event":"request"' in l)
    except OSError:
        return None
def switches(tag, key):
    try:
        return sum(float(l.split()[-1]) for l in open(f"{EV}/{tag}--{key}-logs/gateway-adaptive.metrics.txt")
                   if l.startswith("specgate_regime_switches_total"))
    except OSError:
        return None
keys = sorted({os.path.basename(p)[len(a) + 2:-5] for p in glob.glob(f"{EV}/{a}--*.json")}
              & {os.path.basename(p)[len(b) + 2:-5] for p in glob.glob(f"{EV}/{b}--*.json")})
print(f"| cell | {a} | {b} | same routes | switches {a} / {b} |\n|---|---|---|---|---|")
for k in keys:
    ra, rb = ratio(a, k), ratio(b, k)
    if ra is None or rb is None:
        continue
    ta, tb = route(a, k), route(b, k)
    same = "?" if ta is None or tb is None else ("yes" if ta == tb else f"no ({sum(x != y for x, y in zip(ta, tb))} differ)")
    print(f"| {k} | {ra:.3f} | {rb:.3f} | {same} | {switches(a, k):.0f} / {switches(b, k):.0f} |")
