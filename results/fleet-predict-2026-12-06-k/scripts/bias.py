# ruff: noqa  -- a quick analysis script, kept as it ran
"""The signed error: quartiles of predicted / observed e2e per run, and the share over-predicted.

usage: bias.py LOG...   (.../TAG--WINDOW--sS-gateway.log[.gz])
"""
import os, sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from decompose import analyse

def q(xs, p):
    xs = sorted(xs)
    return xs[int(p * (len(xs) - 1))]

print("| run | median error | e2e pred/obs q25 | q50 | q75 | share over-predicted | Σ predicted / Σ observed |")
print("|---|---|---|---|---|---|---|")
for p in sys.argv[1:]:
    o, rows = analyse(p)
    r = [x["ps"] / x["os"] for x in rows]
    print(f"| {os.path.basename(p).split('-gateway')[0]} | {o['median_err']:.3f} | {q(r, .25):.2f} | {q(r, .5):.2f} | {q(r, .75):.2f} | {sum(x > 1 for x in r) / len(r):.2f} | {sum(x['ps'] for x in rows) / sum(x['os'] for x in rows):.2f} |")
