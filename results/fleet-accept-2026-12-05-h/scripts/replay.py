# ruff: noqa  -- an analysis script, kept as it ran
"""Online replay of the learner's per-request tokens/step on the windows (true tps from the emulator's physics).
usage: replay.py [variant]  -- variant chooses a predictor hook (see PRED)."""
import os, json, gzip, sys, math, statistics as st, collections, os, random
from gateway.settings import Settings
from gateway.core.learner import Learner, Observation
from gateway.core.protocol import request_view
from gateway.core.classify import features
from gateway.core.acceptance_cells import family_of
import os
S = Settings(acceptance_copy_kinds=os.environ.get('KINDS', '1') == '1'); cfg = S.classifier_config()
d = json.load(gzip.open(os.environ.get("DS", "runs/h/dataset.json.gz")))
rows = {}
for w in sorted({r["w"] for r in d}):
    for line in open(f"runs/{w}.jsonl"):
        r = json.loads(line); rows[(w, r["id"])] = r
import gateway.core.acceptance_cells as _A
for _k in ("SHRINK", "EVIDENCE_STEPS", "LENGTH_SHRINK"):
    if os.environ.get(_k): setattr(_A, _k, float(os.environ[_k]))
SB, SS = 4.8, 6.6  # ms, baseline vs n-gram step (break-even 1.375)
CK = None
def run(w, frac=1.0, lag=1.0, seed=0):
    rnd = random.Random(seed)
    lrn = Learner(S.learner_config())
    reqs = [r for r in d if r["w"] == w]
    pend = []  # (finish_t, obs)
    out = []
    for r in reqs:
        raw = rows[(w, r["id"])]; t = raw["t"]
        pend.sort(key=lambda x: x[0])
        while pend and pend[0][0] <= t:
            lrn.observe(pend.pop(0)[1])
        v = request_view(raw["endpoint"], raw["body"]); f = features(v, cfg)
        fam = family_of(v.prefix_blocks)
        if os.environ.get('ASKFAM'):
            import re as _re, zlib
            ask = _re.sub(r"`[^`]*`|\d+", "", v.instruction.lower())
            ask = " ".join(ask.split()[-int(os.environ['ASKFAM']):])
            fam = zlib.crc32(ask.encode()) if ask else None
        cs = f.copy_kind if CK is None else CK(raw['body'], f)
        o, tps, sd, _src = lrn.per_request.for_request(lrn.tokens_per_step_posterior(r["cls"], r["bucket"]), r["cls"], r["bucket"],
                                                 f.max_tokens, f.max_tokens_given, f.prompt_tokens, f.structured_output, fam,
                                                 f.temperature, cs)
        out.append((r, tps, o))
        steps = 1 + math.ceil((r["out"] - 1) / r["tps"])
        spec = rnd.random() < frac
        pend.append((t + lag + r["out"] * 0.006, Observation(role="speculative" if spec else "baseline", task_class=r["cls"], bucket=r["bucket"],
            prompt_tokens=f.prompt_tokens, completion_tokens=r["out"], steps=steps if spec else r["out"], ttft_s=0.05, e2e_s=0.05 + r["out"]*0.006,
            load_self=1.0, max_tokens=f.max_tokens if f.max_tokens_given else None, structured=f.structured_output, family=fam,
            temperature=f.temperature, copy_source=cs)))
    return out
def score(out):
    err = [abs(math.log(p / r["tps"])) for r, p, _ in out]
    reg = tot = 0.0; wrong = 0
    for r, p, _ in out:
        cb, cs = (r["out"] - 1) * SB, (r["out"] - 1) / r["tps"] * SS
        pick_s = p > SS / SB
        if pick_s != (cs < cb): reg += abs(cb - cs); wrong += 1
        tot += min(cb, cs)
    return st.median(err), st.mean(err), reg / tot, wrong / len(out)
if __name__ == "__main__":
    for w in sorted({r["w"] for r in d}):
        m = [score(run(w, 0.5, seed=s)) for s in range(3)]
        print(w, "med|log| %.3f mean %.3f regret %.3f wrong %.2f" % tuple(sum(x[i] for x in m) / 3 for i in range(4)))
