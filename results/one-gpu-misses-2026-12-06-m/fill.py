# ruff: noqa  -- a quick analysis script, kept as it ran
import re, statistics, subprocess
out = subprocess.run(["/work/main/.venv/bin/python", "results/one-gpu-misses-2026-12-06-m/final.py", "mj"], capture_output=True, text=True).stdout
lines = out.splitlines()
head, rows = lines[:2], [l for l in lines[2:] if l.startswith("| ")]
four = ("bursty-510", "mixed-medium", "bursty-501", "azure-conv-c")
ref = [r for r in rows if "(c4)" in r or "(f1)" in r]
seeds = [r for r in rows if any(f"| {w} |" in r for w in four)]
def stats(rs, col):
    v = [float(re.split(r"\s*\|\s*", r)[col].split()[0]) for r in rs]
    return f"{len(v)} runs, median {statistics.median(v):.3f}, worst {max(v):.3f}, above 1.05: {sum(x > 1.05 for x in v)}"
ch = [float(re.split(r"\s*\|\s*", r)[9].rstrip('%')) for r in ref]
rerun = "\n".join(head + ref) + f"\n\nmain: {stats(ref, 6)}; this branch: {stats(ref, 7)}; change per run: median {statistics.median(ch):+.1f}%, " \
        f"from {min(ch):+.1f}% to {max(ch):+.1f}%."
seed_t = "\n".join(head + seeds)
s = open("README.md").read()
s = s.replace("RERUN_TABLE", rerun).replace("SEEDS_TABLE", seed_t)
get = lambda w, sd: next((re.split(r"\s*\|\s*", r)[7] + " (" + re.split(r"\s*\|\s*", r)[8] + ")" for r in rows if f"| {w} |" in r and re.split(r"\s*\|\s*", r)[3] == sd), "not run")
for ph, w in (("MJ510", "bursty-510"), ("MJMM", "mixed-medium"), ("MJ501", "bursty-501"), ("MJCONV", "azure-conv-c")):
    s = s.replace(ph, get(w, "1"))
open("README.md.out", "w").write(s)
print(rerun); print(seed_t)
