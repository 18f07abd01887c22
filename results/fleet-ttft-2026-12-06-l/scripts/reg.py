# ruff: noqa  -- a quick analysis script, kept as it ran
import sys, numpy as np
from glog import load
for path in sys.argv[1:]:
    rs = load(path)
    for role in ('baseline', 'speculative'):
        ss = [r for r in rs if r['backend'] == role]
        X = np.array([[1.0, r['prompt_tokens'] - r.get('cached_tokens', 0), r.get('queued_tokens', 0), r.get('load_self', 0)] for r in ss])
        y = np.array([r['ttft_s'] for r in ss])
        coef, *_ = np.linalg.lstsq(X, y, rcond=None)
        pred = np.array([r['predicted_ttft_s'] for r in ss])
        print(path[-30:], role, len(ss), 'coef const %.3f own %.2e queued %.2e load %.3f' % tuple(coef), 'resid sd %.3f' % np.std(y - X @ coef), 'pred err sd %.3f' % np.std(y - pred))
