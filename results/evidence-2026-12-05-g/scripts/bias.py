# ruff: noqa  -- a quick analysis script, kept as it ran
import sys; sys.path.insert(0, '.')
from tests.test_learner import obs
from gateway.core.learner import Learner
from gateway.settings import Settings
lrn = Learner(Settings().learner_config())
print('prior', lrn.step_model('baseline'), lrn.step_model('speculative'))
# baseline: 2 quiet responses at 4.66 ms a step
for e2e, n in [(0.98 * 0, 0)]: pass
lrn.observe(obs("baseline", 95, 95, 0.10 + 94 * 0.00474, ttft=0.10, load_self=1, prompt=2000))
lrn.observe(obs("baseline", 59, 59, 0.011 + 58 * 0.00467, ttft=0.011, load_self=1))
print('after 2 base', lrn.step_model('baseline'))
for i in range(40):
    lrn.observe(obs("speculative", 150, 100, 0.012 + 99 * 0.0066, ttft=0.012, load_self=1 + i % 2))
    if i in (0, 1, 3, 9, 39): print(i, 'base', lrn.step_model('baseline'), 'spec', lrn.step_model('speculative'))
f = lrn.step_fits if hasattr(lrn, 'step_fits') else None
print([a for a in dir(lrn) if 'fit' in a])
for r, f in lrn._steps.items():
    print(r, 'theta', [x * f.scale_s for x in f.theta], 'p', f.variances_s2(), 'quiet', f.quiet_s, f.quiet_w, 'count', f.count)
