# ruff: noqa  -- a quick analysis script, kept as it ran
import sys, numpy as np
from glog import load
for path in sys.argv[1:]:
    rs = load(path)
    for role in ('baseline', 'speculative'):
        ss = [r for r in rs if r['backend'] == role]
        own = np.array([r['prompt_tokens'] - r.get('cached_tokens', 0) for r in ss], float)
        qd = np.array([r.get('queued_tokens', 0) for r in ss], float)
        pred = np.array([r['predicted_ttft_s'] for r in ss]); y = np.array([r['ttft_s'] for r in ss])
        # implied price: (pred - step) / (own + queued), step ~ small
        X = np.stack([np.ones_like(own), own, qd], 1)
        c, *_ = np.linalg.lstsq(X, pred, rcond=None)
        print(path[-28:], role, 'pred ~ %.3f + %.2e own + %.2e queued, resid %.3f' % (c[0], c[1], c[2], np.std(pred - X @ c)))
        big = np.argsort(-(pred - y))[:5]
        for i in big:
            r = ss[i]
            print('    over by %.2f: pred %.2f obs %.2f own %d queued %d load %.1f inst %s' % (pred[i]-y[i], pred[i], y[i], own[i], qd[i], r['load_self'], r['instance']))
        big = np.argsort(pred - y)[:3]
        for i in big:
            r = ss[i]
            print('    under by %.2f: pred %.2f obs %.2f own %d queued %d load %.1f inst %s' % (y[i]-pred[i], pred[i], y[i], own[i], qd[i], r['load_self'], r['instance']))
