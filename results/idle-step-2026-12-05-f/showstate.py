"""Analysis helper of results/idle-step-2026-12-05-f (see README)."""

import json
import sys

with open(sys.argv[1]) as fh:
    lines = fh.readlines()
for i, line in enumerate(lines):
    if i % int(sys.argv[2] if len(sys.argv) > 2 else 1):
        continue
    s = json.loads(line)
    L = s["learner"]
    g = s["regimes"]["pair-0"]
    m = g["mix"]
    sm = L["step_models"]
    b, p = sm["baseline"], sm["speculative"]
    head = f"{2 * i:3d}s {g['role'][:4]} mix {g['mix_ratio']:.3f} pend {g['pending']} n {m['requests']}"
    mix = f"load {m['load']:.1f} T {m['tokens_per_step']:.2f}"
    base = f"b {b['base_s'] * 1e3:.2f}+{b['per_request_s'] * 1e6:.0f}({b['observations']})"
    spec = f"s {p['base_s'] * 1e3:.2f}+{p['per_request_s'] * 1e6:.0f}({p['observations']})"
    pf = L["prefill_s_per_token"]
    print(head, mix, base, spec, f"pf {pf['baseline'] * 1e6:.1f}/{pf['speculative'] * 1e6:.1f}")
