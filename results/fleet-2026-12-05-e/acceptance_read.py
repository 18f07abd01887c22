"""The learner's read of speculative acceptance against what the servers delivered, per run of a `specgate bench`
file: per (class, bucket), delivered = Σ (tokens - 1) / Σ (chunks - 1) over the requests the speculative servers
streamed (tokens per decode step, the cost model's unit), and N/S = Σ tokens / Σ chunks (the old unit); the
learner's class estimate at the end of the run (`learned`, last run only); and, where the access logs carry it
(`predicted_tokens_per_step`), the median per-request read of the requests sent to speculative servers.

    python acceptance_read.py BENCH.json[.gz] [LOGDIR]
"""

from __future__ import annotations

import glob
import gzip
import json
import statistics
import sys
from collections import defaultdict


def load(path: str) -> dict:
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def main(path: str, logdir: str | None) -> None:
    doc = load(path)
    reads: dict[str, list[float]] = defaultdict(list)
    if logdir:
        for log in glob.glob(f"{logdir}/gateway-*.log"):
            with open(log) as f:
                lines = f.readlines()
            for line in lines:
                if '"event": "request"' not in line and '"event":"request"' not in line:
                    continue
                try:
                    rec = json.loads(line[line.index("{"):])
                except ValueError:
                    continue
                if rec.get("backend") == "speculative" and rec.get("predicted_tokens_per_step"):
                    reads[f"{rec['class']}/{rec['temperature']}"].append(rec["predicted_tokens_per_step"])
    for name, pol in doc["policies"].items():
        sums: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        for r in pol["requests"]:
            if r.get("backend") != "speculative" or str(r.get("status")) != "200" or not r.get("engine_steps"):
                continue
            n, s = r["completion_tokens"], r["engine_steps"]
            acc = sums[f"{r['class']}/{r.get('bucket')}"]
            acc[0] += n - 1 if s > 1 else n
            acc[1] += s - 1 if s > 1 else s
            acc[2] += n
            acc[3] += s
        learned = ((pol.get("learned") or {}).get("learner") or {}).get("classes", {})
        for key, (dn, ds, n, s) in sorted(sums.items()):
            if ds < 50:
                continue
            est = learned.get(key, {}).get("tokens_per_step")
            read = statistics.median(reads[key]) if reads.get(key) else None
            print(f"{path.split('/')[-1]:44s} {name:28s} {key:22s} delivered {dn / ds:.3f} (N/S {n / s:.3f}, "
                  f"{ds} steps)  learner {est if est is None else f'{est:.3f}'}  "
                  f"per-request read (median) {read if read is None else f'{read:.3f}'}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
