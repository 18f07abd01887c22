# ruff: noqa  (a one-off analysis script of this results folder, not product code)
"""Held-out table: per cell, baseline / speculative / adaptive (main, new) means and adaptive ÷ the better static.
usage: evtab.py [markdown]"""

import glob
import json
import os
import statistics as st
import sys

md = len(sys.argv) > 1


def reqs(f):
    d = json.load(open(f))
    (pol,) = d["policies"].values()
    return {r["id"]: r["e2e_s"] for r in pol["requests"]}, pol["summary"]


rows = []
for bf in sorted(glob.glob(os.environ.get("EVDIR", "ev") + "/B--*.json")):
    key = os.path.basename(bf)[3:-5]
    fs = {t: os.environ.get("EVDIR", "ev") + f"/{t}--{key}.json" for t in ("B", "S", "main", "new", "new2")}
    fs = {t: f for t, f in fs.items() if os.path.exists(f)}
    if not all(t in fs for t in ("B", "S", "main")):
        continue
    data = {t: reqs(f) for t, f in fs.items()}
    ids = list(data["B"][0])
    tot = {t: sum(data[t][0][i] for i in ids) for t in fs}
    better = min(tot["B"], tot["S"])
    share = {
        t: data[t][1]["routed"].get("speculative", 0) / max(1, sum(data[t][1]["routed"].values()))
        for t in fs
        if t not in "BS"
    }
    prof, name, scale, seed = key.split("--")
    rows.append(
        dict(
            prof=prof,
            name=name,
            scale=scale,
            n=len(ids),
            B=tot["B"] / len(ids),
            S=tot["S"] / len(ids),
            **{t: tot[t] / better for t in share},
            **{t + "_s": share[t] for t in share},
            errs=sum(data[t][1]["errors"] for t in fs),
        )
    )
hdr = "| profile | trace | scale | requests | baseline s | speculative s | main | trials-light (b47636f) | **final** | → spec: main / trials-light / final |"
if md:
    print(hdr)
    print("|" + "---|" * 10)
for r in rows:
    def f(t):
        return f"{r[t]:.3f}" if t in r else "-"
    def p(t):
        return f"{r[t + '_s'] * 100:.0f}%" if t in r else "-"
    cells = [
        r["prof"],
        r["name"],
        r["scale"],
        str(r["n"]),
        f"{r['B']:.3f}",
        f"{r['S']:.3f}",
        f("main"),
        f("new"),
        f"**{f('new2')}**",
        f"{p('main')} / {p('new')} / {p('new2')}",
    ]
    print(("| " + " | ".join(cells) + " |") if md else "  ".join(cells) + (f" ERR {r['errs']}" if r["errs"] else ""))


def summ(sel, label):
    xs = [r for r in rows if sel(r)]
    if not xs:
        return
    for t in ("main", "new", "new2"):
        v = [r[t] for r in xs if t in r]
        if not v:
            continue
        print(
            f"{label} {t}: n={len(v)} median {st.median(v):.3f} worst {max(v):.3f} >1.05: {sum(x > 1.05 for x in v)} >1.01: {sum(x > 1.01 for x in v)}"
        )


def fam(r):
    return r["name"].startswith("bursty-")
for prof in ("h200-ngram", "h200-ngram-dynk"):
    for sc in ("x1", "x4"):
        summ(lambda r: fam(r) and r["prof"] == prof and r["scale"] == sc, f"family {prof} {sc}")
    summ(lambda r: not fam(r) and r["prof"] == prof, f"built-ins {prof}")
summ(lambda r: fam(r), "family all")
