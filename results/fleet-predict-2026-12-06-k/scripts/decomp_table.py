# ruff: noqa  -- a quick analysis script, kept as it ran
"""Section 1's table: the decomposition (decompose.py) of every gateway log given, one row each.

usage: decomp_table.py LOG...      (LOG: .../TAG--WINDOW--sS-gateway.log[.gz])
"""
import os, sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from decompose import analyse

print("| run | median error | with TTFT as observed | with decode as observed | with output length as observed | with tokens/step too (decode steps) | with step time as observed | TTFT pred/obs | decode pred/obs | step pred/obs (b; s) | TTFT share of e2e |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for p in sys.argv[1:]:
    o, _ = analyse(p)
    name = os.path.basename(p).split("-gateway")[0]
    print(f"| {name} | {o['median_err']:.3f} | {o['oracle_ttft']:.3f} | {o['oracle_decode']:.3f} | {o['oracle_out_len']:.3f} | "
          f"{o['oracle_steps']:.3f} | {o['oracle_step_s']:.3f} | {o['ttft_pred/obs']:.2f} | {o['decode_pred/obs']:.2f} | "
          f"{o['baseline']['step_s_pred/obs']:.2f}; {o['speculative']['step_s_pred/obs']:.2f} | {o['ttft_share_of_obs']:.2f} |")
