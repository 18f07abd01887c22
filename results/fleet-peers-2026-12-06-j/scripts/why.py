"""Per-request view of where adaptive loses to 4 x baseline on azure-conv-a (seeds' gateway logs + bench JSON)."""
import glob, gzip, json, os, re, statistics as st, sys

RAW = sys.argv[1]
W = sys.argv[2] if len(sys.argv) > 2 else 'azure-conv-a'
STATIC = sys.argv[3]  # results/peers-2026-12-05/cells/cell--W--2+2.json.gz
op = lambda p: gzip.open(p, 'rt') if p.endswith('.gz') else open(p)
ref = json.load(op(STATIC))['policies']['least_loaded@4xbaseline']['requests']
B = {r['id']: r['e2e_s'] for r in ref}
print('| run | mean e2e | to spec | of them > 300 tokens | their e2e − 4×base (s, sum) | all spec-routed e2e − 4×base (s) '
      '| all baseline-routed e2e − 4×base (s) | decode steps taken ÷ predicted, routed on an estimate (raw) | sent there priced at ≤ 1.05 tokens/step, > 128 tokens |')
print('|---|---|---|---|---|---|---|---|---|')
for log in sorted(glob.glob(f'{RAW}/*--{W}--s*-gateway.log*')):
    tag = os.path.basename(log).split('-gateway')[0]
    L = [json.loads(x) for x in op(log)]
    R = [x for x in L if x.get('event') == 'request']
    spec = [r for r in R if r['backend'] == 'speculative']
    long = [r for r in spec if r['completion_tokens'] > 300]
    d_long = sum(r['observed_s'] - B[r['id']] for r in long)
    d_spec = sum(r['observed_s'] - B[r['id']] for r in spec)
    d_base = sum(r['observed_s'] - B[r['id']] for r in R if r['backend'] == 'baseline')
    taken = pred = 0.0
    for r in spec:
        if r['reason'] == 'explore' or not r.get('predicted_tokens_per_step'):
            continue
        m = re.search(r'/([0-9.]+)$', r.get('tokens_per_step_source') or '')
        raw = r['predicted_tokens_per_step'] * (float(m.group(1)) if m else 1.0)
        steps = max(r['engine_steps'] - 1, 1); toks = max(r['completion_tokens'] - 1, 1)
        taken += steps; pred += toks / raw
    lucky = sum(1 for r in spec if r['reason'].startswith('predicted_faster') and r['predicted_tokens_per_step'] <= 1.05
                and r['completion_tokens'] > 128)
    mean = st.mean(r['observed_s'] for r in R)
    print(f'| {tag} | {mean:.4f} | {len(spec)} | {len(long)} | {d_long:+.1f} | {d_spec:+.1f} | {d_base:+.1f} | {taken / pred:.2f} | {lucky} |')
