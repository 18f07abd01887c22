"""The table of results/fleet-peers-2026-12-06-j from raw/TAG--WINDOW--sS.json.gz.

python final_table.py RAW_DIR [BRANCH_TAG]
"""

import glob
import gzip
import json
import os
import re
import statistics as st
import sys

D = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "raw")
BR = sys.argv[2] if len(sys.argv) > 2 else "branch"
STATIC = {  # best same-size static fleet of results/peers-2026-12-05 (08:22-09:01 UTC, 2026-12-05)
    "azure-code-a": (0.229, "4 x spec"), "azure-code-burst": (0.409, "4 x spec"), "azure-conv-a": (1.263, "4 x base"),
    "azure-conv-b-x2": (0.664, "4 x base"), "mooncake-a": (3.511, "4 x base"), "mooncake-b": (3.858, "4 x base")}
PEER = {"azure-code-a": "sglang", "azure-code-burst": "vllm ca", "azure-conv-a": "vllm ca", "azure-conv-b-x2": "sglang",
        "mooncake-a": "sglang", "mooncake-b": "sglang"}
TODAY = {"static": None, "static4s": "4 x spec", "static4b": "4 x base"}  # today's static runs (None: as round h's)
runs: dict[tuple[str, str], dict[int, tuple[float, float, float, int]]] = {}
for p in glob.glob(D + "/*.json*"):
    m = re.match(r"(.+?)--(.+?)--s(\d+)\.json", os.path.basename(p))
    if not m:
        continue
    tag, w, s = m.groups()
    with (gzip.open(p, "rt") if p.endswith(".gz") else open(p)) as fh:
        j = json.load(fh)
    for v in j["policies"].values():
        reqs = v.get("requests") or []
        spec = sum(r.get("backend") == "speculative" for r in reqs) / max(len(reqs), 1)
        sm = v["summary"]
        runs.setdefault((tag, w), {})[int(s)] = (sm["mean_e2e_s"], spec, sm["mean_ttft_s"], sm["errors"])


def cell(tag: str, w: str, seeds: tuple[int, ...]) -> tuple[list[float], float | None]:
    got = runs.get((tag, w), {})
    vals = [got[s][0] for s in seeds if s in got]
    return vals, (st.median(vals) if vals else None)


def f(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def r(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a / b


print("| cell | main s1, s2, s3 | branch s1, s2, s3 | branch ÷ main (s1-2 med; s3) | → spec % (branch) "
      "| TTFT (branch, s) | best static: 2026-12-05; today | ÷ static (s1-2; s3); ÷ today’s static "
      "| best peer s1, s2, s3 (med) | ÷ peer (s1-2; s3; all-3 med ÷ peer med) |")
print("|" + "---|" * 10)
for w, (sv, sname) in STATIC.items():
    mv, m12, m3 = cell("main", w, (1, 2, 3))[0], cell("main", w, (1, 2))[1], cell("main", w, (3,))[1]
    bv, b12, b3 = cell(BR, w, (1, 2, 3))[0], cell(BR, w, (1, 2))[1], cell(BR, w, (3,))[1]
    ball = cell(BR, w, (1, 2, 3))[1]
    pv, pmed = cell("peer", w, (1, 2, 3))
    todays = [(v, TODAY[t] or sname) for t in TODAY if (v := cell(t, w, (1,))[1]) is not None]
    today, tname = min(todays) if todays else (None, "")
    got = runs.get((BR, w), {})
    spec = ", ".join(f"{got[s][1] * 100:.0f}" for s in sorted(got))
    ttft = ", ".join(f"{got[s][2]:.3f}" for s in sorted(got))
    print(f"| {w} | {', '.join(map(f, mv))} | {', '.join(map(f, bv))} | {f(r(b12, m12))}; {f(r(b3, m3))} "
          f"| {spec} | {ttft} | {sv} ({sname}); {f(today)} ({tname}) "
          f"| {f(r(b12, sv))}; {f(r(b3, sv))}; {f(r(b12, today))}, {f(r(b3, today))} "
          f"| {', '.join(map(f, pv))} ({f(pmed)}, {PEER[w]}) "
          f"| {f(r(b12, pmed))}; {f(r(b3, pmed))}; {f(r(ball, pmed))} |")
print(f"\nerrors over all runs: {sum(v[3] for d in runs.values() for v in d.values())}")
