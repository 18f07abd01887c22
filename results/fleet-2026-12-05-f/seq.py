# ruff: noqa  -- a quick analysis script, kept as it ran
import json
import sys

logf, benchf, rep, lo, hi = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
rs=[json.loads(l) for l in open(logf) if '"event":"request"' in l]
bench=json.load(open(benchf))['policies']
bench=list(bench.values())[0]['requests']
sent={r['id']:r['sent_s'] for r in bench if r.get('repeat', 0) in (rep, 0)}
rs=[r for r in rs if lo<=sent.get(r['id'],-1)<hi]
rs.sort(key=lambda r: sent[r['id']])
for r in rs:
    print(f"{sent[r['id']]:6.2f} {r['class'][:6]:6s} {r['temperature'][:3]} {r['backend'][:4]} P{r['prompt_tokens']:5d} L{r['load_self']:4.1f} O{r['completion_tokens']:4d}/{r['predicted_output_tokens']:5.1f} T{(r.get('predicted_tokens_per_step') or 0):4.2f}/{(r['completion_tokens']-1)/max(r['engine_steps']-1,1):4.2f} pred {r['predicted_s']:.3f} ttft {r['predicted_ttft_s']:.3f}/{r['ttft_s']:.3f} obs {r['observed_s']:.3f} {r['reason'][:12]} {r.get('ratio') or 0:.2f}")
