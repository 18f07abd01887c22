# ruff: noqa  -- a quick analysis script, kept as it ran
import json, sys
sys.path.insert(0, ".")  # run from the repository root: mixcheck.py BENCH_JSON TRUE_SPEC_STEP_S
from gateway.core import regime as rg
from gateway.core.costmodel import StepModel
path = sys.argv[1]
d = json.load(open(path)); a = d["policies"]["adaptive"]; l = a["learned"]["learner"]
cls = l["classes"]
logs = [json.loads(x) for x in open(path.replace(".json", "-logs/gateway-adaptive.log")) if '"event":"request"' in x]
samples = []
for r in logs:
    c = cls.get(f"{r['class']}/{r['temperature']}")
    tps = c["tokens_per_step"] if c else 1.2
    samples.append(rg.MixSample(r["prompt_tokens"] - r.get("cached_tokens", 0), r["completion_tokens"], tps, r["load_self"], tps))
sm = l["step_models"]
models = {k: StepModel(v["base_s"], v["per_request_s"]) for k, v in sm.items()}
pre = l["prefill_s_per_token"]
print("learned models", {k: (round(m.base_s*1e3, 2), round(m.per_request_s*1e6, 1)) for k, m in models.items()})
for spec_base in [models["speculative"].base_s, float(sys.argv[2]) if len(sys.argv) > 2 else 0.00653]:
    for slope in [models["speculative"].per_request_s, models["baseline"].per_request_s * 1.5]:
        m2 = dict(models); m2["speculative"] = StepModel(spec_base, slope)
        whole = rg.ratio_of(rg.mix_costs(samples, m2, pre, 1.0, evidence=True))
        print(f"spec base {spec_base*1e3:.2f} ms slope {slope*1e6:.1f}: whole-trace evidence ratio {whole:.3f}; by thirds",
              [round(rg.ratio_of(rg.mix_costs(samples[i:i+len(samples)//3], m2, pre, 1.0, evidence=True)), 3) for i in range(0, len(samples), len(samples)//3)])
