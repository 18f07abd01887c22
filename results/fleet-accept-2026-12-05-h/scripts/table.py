# ruff: noqa  -- an analysis script, kept as it ran
import json, statistics as st
peers = {}
for cell in ("azure-code-a--2+2", "azure-code-b-x2--4+4", "azure-code-b--1+1", "azure-conv-b--1+1"):
    d = json.load(open(f"out/peers--{cell}.json"))
    pp = {k: p["summary"]["mean_e2e_s"] for k, p in d["policies"].items() if ":" in k}
    best = min(pp, key=pp.get)
    row = {}
    for v in ("main", "br1"):
        xs, es, sp = [], [], []
        for s in (22, 23, 24):
            p = json.load(open(f"ab/{v}--{cell}--s{s}.json"))["policies"]["adaptive"]
            xs.append(p["summary"]["mean_e2e_s"]); es.append(p["prediction"]["median_error_ratio"]); sp.append(p["summary"]["routed"].get("speculative", 0) / p["summary"]["requests"])
        t = json.load(open(f"ab/{v}--{cell}--s21.json"))["policies"]["adaptive"]["summary"]["mean_e2e_s"]
        row[v] = (xs, st.median(xs), es, sp, t)
    m, b = row["main"], row["br1"]
    print(f"| {cell} | {m[4]:.4f} / {b[4]:.4f} | " + ", ".join(f"{x:.4f}" for x in m[0]) + " | " + ", ".join(f"{x:.4f}" for x in b[0])
          + f" | {b[1]/m[1]:.3f} ({', '.join(f'{y/x:.3f}' for x, y in zip(m[0], b[0]))}) | {pp[best]:.4f} ({best}) | {m[1]/pp[best]:.3f} | **{b[1]/pp[best]:.3f}** ({min(b[0])/pp[best]:.3f}–{max(b[0])/pp[best]:.3f}) | "
          + f"{min(m[2]):.3f}–{max(m[2]):.3f} / {min(b[2]):.3f}–{max(b[2]):.3f} | {min(m[3]):.2f}–{max(m[3]):.2f} / {min(b[3]):.2f}–{max(b[3]):.2f} |")
    print("   peers:", {k: round(v, 4) for k, v in pp.items()})
