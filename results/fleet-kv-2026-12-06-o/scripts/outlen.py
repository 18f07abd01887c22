# ruff: noqa  -- a quick analysis script, kept as it ran
"""Per arm (tag prefix) and window, pooled over runs: Σ observed / Σ predicted output tokens and decode seconds per role,
and the decode seconds a predicted output token (observed decode / observed tokens over predicted / predicted)."""
import glob, gzip, json, os, re, sys

acc = {}
for path in sys.argv[1:]:
    name = os.path.basename(path) if path.endswith(".gz") else os.path.basename(os.path.dirname(path))
    m = re.match(r"([a-z]+)\d*[b-d]?--(.+)--s\d-(logs|gateway)", name)
    arm = "main" if m.group(1).startswith("main") else re.match(r"([a-z]+\d?)", name).group(1)
    for l in (gzip.open(path, "rt") if path.endswith(".gz") else open(path)):
        if '"event":"request"' not in l:
            continue
        r = json.loads(l)
        if not r.get("predicted_s") or r.get("ttft_s") is None or not r.get("completion_tokens"):
            continue
        a = acc.setdefault((m.group(2), arm, r["backend"]), [0, 0.0, 0.0, 0.0, 0.0])
        a[0] += 1; a[1] += r["completion_tokens"]; a[2] += r["predicted_output_tokens"]
        a[3] += r["observed_s"] - r["ttft_s"]; a[4] += r["predicted_s"] - r["predicted_ttft_s"]
for (w, arm, role), (n, co, cp, do, dp) in sorted(acc.items()):
    print(f"{w:11s} {arm:5s} {role:11s} n {n:4d} output o/p {co / cp:.2f} decode o/p {do / dp:.2f} per token o/p {(do / co) / (dp / cp):.2f}")
