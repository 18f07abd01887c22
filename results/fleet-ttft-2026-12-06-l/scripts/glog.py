# ruff: noqa  -- a quick analysis script, kept as it ran
import json, sys, statistics as st
def load(path):
    out = []
    for line in open(path):
        try: d = json.loads(line)
        except Exception: continue
        if d.get('event') == 'request' and 'ttft_s' in d and d.get('status') == '200':
            out.append(d)
    return out
def q(xs, p):
    xs = sorted(xs); return xs[min(int(p * len(xs)), len(xs) - 1)] if xs else float('nan')
for path in (sys.argv[1:] if __name__ == "__main__" else []):
    rs = load(path)
    if __name__ != "__main__": continue
    print(path, len(rs), 'mean ttft %.4f' % st.mean(r['ttft_s'] for r in rs))
    for name, sel in [('all', lambda r: True), ('base', lambda r: r['backend'] == 'baseline'), ('spec', lambda r: r['backend'] == 'speculative'),
                      ('queued>0', lambda r: r.get('queued_tokens', 0) > 0), ('queued=0', lambda r: r.get('queued_tokens', 0) == 0),
                      ('cached>0', lambda r: r.get('cached_tokens', 0) > 0)]:
        ss = [r for r in rs if sel(r)]
        if not ss: continue
        pt = [r['predicted_ttft_s'] for r in ss if r.get('predicted_ttft_s') is not None]
        print(f"  {name:10s} n {len(ss):3d} ttft mean {st.mean(r['ttft_s'] for r in ss):.3f} sum {sum(r['ttft_s'] for r in ss):.1f}"
              + (f" pred mean {st.mean(pt):.3f} sum pred/obs {sum(pt)/sum(r['ttft_s'] for r in ss if r.get('predicted_ttft_s') is not None):.2f}" if pt else '')
              + f" prompt {st.mean(r['prompt_tokens'] for r in ss):.0f} queued {st.mean(r.get('queued_tokens',0) for r in ss):.0f} load {st.mean(r.get('load_self',0) for r in ss):.2f}")
    by = {}
    for r in rs: by.setdefault(r['instance'], []).append(r)
    for k, ss in sorted(by.items()):
        print(f"  {k:14s} n {len(ss):3d} ttft mean {st.mean(r['ttft_s'] for r in ss):.3f} prompt tokens {sum(r['prompt_tokens'] for r in ss)} e2e {st.mean(r['observed_s'] for r in ss):.3f}")
