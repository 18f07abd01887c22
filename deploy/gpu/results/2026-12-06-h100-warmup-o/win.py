# ruff: noqa  -- a quick analysis script, kept as it ran
"""Mean e2e per window of arrival (s from the first request), per policy, from real_bench's requests.jsonl[.gz]."""
import gzip, json, sys
EDGES = [0, 15, 20, 25, 30, 80]
for path in sys.argv[1:]:
    op = gzip.open if path.endswith(".gz") else open
    rows = [json.loads(l) for l in op(path, "rt")]
    for pol in sorted({r["policy"] for r in rows}):
        rs = [r for r in rows if r["policy"] == pol and r["status"] == "200"]
        t0 = min(r["sent_at_s"] for r in rs)
        cells = []
        for lo, hi in zip(EDGES, EDGES[1:]):
            w = [r["e2e_s"] for r in rs if lo <= r["sent_at_s"] - t0 < hi]
            cells.append(f"{sum(w) / len(w):.2f}" if w else "-")
        spec = sum(r["backend"] == "speculative" for r in rs)
        print(f"{path.split('/')[0]:>15} {pol:<11} n={len(rs)} mean {sum(r['e2e_s'] for r in rs) / len(rs):.3f} | " + " | ".join(cells) + f" | spec {spec}")
