"""Table of the Mooncake cells: per run (repeat) mean TTFT, mean e2e, prefix hit rate; medians and ratios."""
# ruff: noqa: E501, E702, SIM115  (a one-off table script, kept as run)
import json
import os
import statistics as st
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "out"

def runs(doc, pol):
    p = doc["policies"].get(pol)
    if p is None:
        return None
    by = {}
    for r in p["requests"]:
        by.setdefault(r.get("repeat", 1), []).append(r)
    out = []
    for i, rep in enumerate(sorted(by)):
        rs = by[rep]
        ok = [r for r in rs if r.get("status") == "200" and r.get("ttft_s") is not None]
        em = p["emulator"][i] if i < len(p["emulator"]) else {}
        hits = sum(v.get("prefix_cache_hits", 0) for v in em.values())
        q = sum(v.get("prefix_cache_queries", 0) for v in em.values())
        out.append(dict(ttft=st.mean(r["ttft_s"] for r in ok), e2e=st.mean(r["e2e_s"] for r in ok),
                        hit=hits / q if q else float("nan"), err=len(rs) - len(ok)))
    learned = (p.get("learned") or {}).get("learner") or {}
    return out, learned.get("prefill_s_per_token"), p.get("prediction", {}).get("median_error_ratio")

def fmt(xs, k):
    return ", ".join(f"{x[k]:.3f}" for x in xs)

def med(xs, k):
    return st.median(x[k] for x in xs)

print("| window | fleet | main adaptive TTFT | branch adaptive TTFT | least_loaded TTFT | vllm-router ca TTFT | sglang-router ca TTFT "
      "| **branch ÷ ll** | main ÷ ll | hit: main / branch / vllm ca / sglang ca | e2e: main / branch / ll / vllm / sglang "
      "| branch e2e ÷ ll / ÷ vllm | errors |")
print("|" + "---|" * 13)
extra = []
for cell in ["m3-2+2", "m4-4+4", "m3-4+4", "m4-2+2", "m1-4+4", "m2-2+2"]:
    fm, fb = f"{OUT}/{cell}-main.json", f"{OUT}/{cell}-branch.json"
    if not (os.path.exists(fm) and os.path.exists(fb)):
        continue
    dm, db = json.load(open(fm)), json.load(open(fb))
    m, mp, me = runs(dm, "adaptive")
    b, bp, be = runs(db, "adaptive")
    ll, _, _ = runs(db, "least_loaded")
    peers = [k for k in db["policies"] if k not in ("adaptive", "least_loaded")]
    v = runs(db, next(k for k in peers if "vllm" in k))[0]
    s = runs(db, next(k for k in peers if "sglang" in k))[0]
    w, n = cell.split("-")
    errs = sum(x["err"] for xs in (m, b, ll, v, s) for x in xs)
    print(f"| {w} | {n} | {fmt(m,'ttft')} | {fmt(b,'ttft')} | {fmt(ll,'ttft')} | {fmt(v,'ttft')} | {fmt(s,'ttft')} "
          f"| **{med(b,'ttft')/med(ll,'ttft'):.4f}** | {med(m,'ttft')/med(ll,'ttft'):.4f} "
          f"| {med(m,'hit'):.3f} / {med(b,'hit'):.3f} / {med(v,'hit'):.3f} / {med(s,'hit'):.3f} "
          f"| {med(m,'e2e'):.3f} / {med(b,'e2e'):.3f} / {med(ll,'e2e'):.3f} / {med(v,'e2e'):.3f} / {med(s,'e2e'):.3f} "
          f"| {med(b,'e2e')/med(ll,'e2e'):.3f} / {med(b,'e2e')/med(v,'e2e'):.3f} | {errs} |")
    extra.append(f"{cell}: hit ranges main {fmt(m,'hit')}; branch {fmt(b,'hit')}; vllm {fmt(v,'hit')}; sglang {fmt(s,'hit')}; "
                 f"e2e main {fmt(m,'e2e')}; branch {fmt(b,'e2e')}; ll {fmt(ll,'e2e')}; vllm {fmt(v,'e2e')}; sglang {fmt(s,'e2e')}; "
                 f"learned prefill s/token main {mp} branch {bp}; median e2e prediction error main {me} branch {be}")
print()
for e in extra:
    print("-", e)
print()
print("| window | fleet | branch, TTFT weight 1: TTFT (seeds) | ÷ least_loaded | hit (seeds) | e2e (seeds) | e2e ÷ branch adaptive | TTFT ÷ branch adaptive |")
print("|---|---|---|---|---|---|---|---|")
for cell in ["m3-2+2", "m4-4+4", "m3-4+4"]:
    f = f"{OUT}/{cell}-ttftw.json"
    if not os.path.exists(f):
        continue
    t = runs(json.load(open(f)), "adaptive")[0]
    db = json.load(open(f"{OUT}/{cell}-branch.json"))
    b = runs(db, "adaptive")[0]; ll = runs(db, "least_loaded")[0]
    w, n = cell.split("-")
    print(f"| {w} | {n} | {fmt(t,'ttft')} | **{med(t,'ttft')/med(ll,'ttft'):.4f}** | {fmt(t,'hit')} | {fmt(t,'e2e')} | {med(t,'e2e')/med(b,'e2e'):.3f} | {med(t,'ttft')/med(b,'ttft'):.3f} |")
