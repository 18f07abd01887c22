# ruff: noqa  -- a quick analysis script, kept as it ran
import json, sys
for i, line in enumerate(open(sys.argv[1])):
    if i % int(sys.argv[2] if len(sys.argv) > 2 else 1): continue
    s = json.loads(line); L = s['learner']; g = s['regimes']['pair-0']; m = g['mix']
    sm = L['step_models']
    print(f"{2*i:3d}s {g['role'][:4]} mix {g['mix_ratio']:.3f} pend {g['pending']} n {m['requests']} load {m['load']:.1f} T {m['tokens_per_step']:.2f} "
          f"b {sm['baseline']['base_s']*1e3:.2f}+{sm['baseline']['per_request_s']*1e6:.0f}({sm['baseline']['observations']}) s {sm['speculative']['base_s']*1e3:.2f}+{sm['speculative']['per_request_s']*1e6:.0f}({sm['speculative']['observations']}) "
          f"pf {L['prefill_s_per_token']['baseline']*1e6:.1f}/{L['prefill_s_per_token']['speculative']*1e6:.1f}")
