# ruff: noqa
import json, sys
tag, m = sys.argv[1], sys.argv[2]
b=json.load(open(f'runs/base--h200-ngram--bursty-{m}--x1--s1.json')); n=json.load(open(f'runs/{tag}--h200-ngram--bursty-{m}--x1--s1.json'))
b['policies']['adaptive']=n['policies']['adaptive']; json.dump(b,open(f'/tmp/w37/merged.json','w'))
