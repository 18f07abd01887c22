# ruff: noqa  -- a quick analysis script, kept as it ran
"""Online replay of output-length prediction (predict, then observe) over workloads: median |pred-true|/true overall
and per max_tokens. PYTHONPATH picks the version."""
import json,sys,statistics as st,collections as C
from gateway.core.classify import classify, features, temperature_bucket
from gateway.core.learner import Learner, Observation
from gateway.core.protocol import request_view
from gateway.settings import Settings
from gateway.workloads.items import load_workload
s=Settings(); cc=s.classifier_config()
for W in sys.argv[1:]:
    lrn=Learner(s.learner_config()); errs=C.defaultdict(list); allerr=[]
    if W.endswith('.jsonl'):
        items=[json.loads(l) for l in open(W)]
        items=[(i['endpoint'], i['body'], i['trace']['output_tokens']) for i in items]
    else:
        from gateway.emulator.text import tokenize
        items=[(it.endpoint, it.body, len(tokenize(it.reference))) for it in load_workload(W)]
    for ep, body, actual in items:
        f=features(request_view(ep, body), cc); c,b=classify(f,cc), temperature_bucket(f.temperature)
        if actual<=0: continue
        p=lrn.per_request.output(c,b,f.max_tokens,f.max_tokens_given,f.prompt_tokens,f.structured_output)[0]
        e=abs(p-actual)/actual; allerr.append(e); errs[f.max_tokens if f.max_tokens_given else None].append(e)
        lrn.observe(Observation(role='baseline', task_class=c, bucket=b, prompt_tokens=f.prompt_tokens, completion_tokens=actual,
            steps=None, ttft_s=0.1, e2e_s=1.0, load_self=1.0, max_tokens=f.max_tokens if f.max_tokens_given else None, warmup=True, structured=f.structured_output))
    print(W.split('/')[-1], 'median', round(st.median(allerr),3), {k:(len(v), round(st.median(v),2)) for k,v in sorted(errs.items(), key=str)})
