"""Per-request view of where adaptive loses to 4 x baseline on a window (the gateway logs + round h's static records).

python why.py RAW_DIR WINDOW STATIC_CELL_JSON_GZ
"""

import glob
import gzip
import json
import os
import re
import statistics as st
import sys
from typing import IO, Any


def read(path: str) -> IO[Any]:
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


RAW, W, STATIC = sys.argv[1], sys.argv[2], sys.argv[3]
with read(STATIC) as fh:
    ref = json.load(fh)["policies"]["least_loaded@4xbaseline"]["requests"]
B = {r["id"]: r["e2e_s"] for r in ref}
print("| run | mean e2e | to spec | of them > 300 tokens | their e2e − 4×base (s, sum) "
      "| all spec-routed e2e − 4×base (s) | all baseline-routed e2e − 4×base (s) "
      "| decode steps taken ÷ predicted, routed on an estimate (raw) "
      "| sent there priced at ≤ 1.05 tokens/step, > 128 tokens |")
print("|---|---|---|---|---|---|---|---|---|")
for log in sorted(glob.glob(f"{RAW}/*--{W}--s*-gateway.log*")):
    tag = os.path.basename(log).split("-gateway")[0]
    with read(log) as fh:
        R = [x for x in map(json.loads, fh) if x.get("event") == "request"]
    if not R:
        continue
    spec = [r for r in R if r["backend"] == "speculative"]
    long = [r for r in spec if r["completion_tokens"] > 300]
    d_long = sum(r["observed_s"] - B[r["id"]] for r in long)
    d_spec = sum(r["observed_s"] - B[r["id"]] for r in spec)
    d_base = sum(r["observed_s"] - B[r["id"]] for r in R if r["backend"] == "baseline")
    taken = pred = 0.0
    for r in spec:
        if r["reason"] == "explore" or not r.get("predicted_tokens_per_step"):
            continue
        m = re.search(r"/([0-9.]+)$", r.get("tokens_per_step_source") or "")
        raw = r["predicted_tokens_per_step"] * (float(m.group(1)) if m else 1.0)  # before the calibration
        taken += max(r["engine_steps"] - 1, 1)
        pred += max(r["completion_tokens"] - 1, 1) / raw
    low = sum(1 for r in spec if r["reason"].startswith("predicted_faster")
              and r["predicted_tokens_per_step"] <= 1.05 and r["completion_tokens"] > 128)
    mean = st.mean(r["observed_s"] for r in R)
    print(f"| {tag} | {mean:.4f} | {len(spec)} | {len(long)} | {d_long:+.1f} | {d_spec:+.1f} | {d_base:+.1f} "
          f"| {taken / pred:.2f} | {low} |")
