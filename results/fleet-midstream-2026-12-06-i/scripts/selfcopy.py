# ruff: noqa  -- an analysis script
"""Does the prompt say how well n-gram drafts will do? Per request: the true tokens/step (traj.py), against a
prompt-only feature: the prompt lookup replayed on the prompt's last part as if it were the answer (how much of
its own tail the rest of it predicts). Spearman rank correlation per window and class, and the regret of placing by
a threshold on it within each (class, temperature) cell vs by the cell mean."""
import json, gzip, sys, statistics as st, collections as C
from gateway.core.shadow_lookup import replay_text, LookupConfig, tokenize
from gateway.emulator.wire import chat_prompt
T = json.load(gzip.open("runs/i/traj.json.gz"))
cfg = LookupConfig()
def rank(xs):
    o = sorted(range(len(xs)), key=lambda i: xs[i]); r = [0] * len(xs)
    for k, i in enumerate(o): r[i] = k
    return r
def spearman(a, b):
    if len(a) < 5: return float("nan")
    ra, rb = rank(a), rank(b); ma, mb = st.mean(ra), st.mean(rb)
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb)); den = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** .5
    return num / den if den else float("nan")
for w in sys.argv[1:]:
    rows = []
    for line in open(f"runs/{w}.jsonl"):
        r = json.loads(line); b = r["body"]
        p = chat_prompt(b["messages"]) if "messages" in b else b["prompt"]
        toks = tokenize(p); cut = max(len(toks) - 64, len(toks) // 2)
        head, tail = "".join(toks[:cut]), "".join(toks[cut:])
        feat = replay_text(head, tail, cfg).tokens_per_step if tail else 1.0
        t = T[w][r["id"]]; true = (t["L"] - 1) / max(len(t["steps"]), 1)
        rows.append((r.get("kind"), float(b.get("temperature", 1.0)) > 0.05, feat, true, t["L"]))
    by = C.defaultdict(list)
    for k, s, f, tr, L in rows: by[(k, s)].append((f, tr, L))
    print(w, "all", f"rho={spearman([x[2] for x in rows], [x[3] for x in rows]):.2f} n={len(rows)}")
    for key, xs in sorted(by.items(), key=lambda kv: -len(kv[1])):
        if len(xs) >= 15:
            print("  ", key, f"rho={spearman([x[0] for x in xs], [x[1] for x in xs]):+.2f} n={len(xs)} true tps median {st.median(x[1] for x in xs):.2f} spread p10-p90 {sorted(x[1] for x in xs)[len(xs)//10]:.2f}-{sorted(x[1] for x in xs)[len(xs)*9//10]:.2f}")
