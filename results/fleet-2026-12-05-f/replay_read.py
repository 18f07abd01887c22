"""Offline: replay a stored bench run's speculative responses through the learner of whichever code is on
PYTHONPATH, in the order they finished, and print what the decision path would have read for each request just
before it was observed (the class estimate times its per-request cells, as `Router.estimates` asks), against what
the servers delivered (Σ (tokens - 1) / Σ (chunks - 1)), and the decode steps the reads implied for the
requests' true lengths (Σ (tokens - 1) / read) over the steps they took (second half; 1: right for these
lengths). Prompt families are left out (the records carry no text blocks).

    PYTHONPATH=CODE python replay_read.py BENCH.json[.gz] POLICY WORKLOAD.jsonl [SPLIT.json]

Each (class, bucket) is also split by whether the prompt carries a copy source, read from this branch's classifier
where the code has it (and written to SPLIT.json), else from SPLIT.json (to replay older code on the same split).
"""

from __future__ import annotations

import gzip
import inspect
import json
import statistics
import sys
from collections import defaultdict

from gateway.core.classify import classify, features, temperature_bucket
from gateway.core.learner import Learner, Observation
from gateway.core.protocol import request_view
from gateway.settings import Settings


def main(path: str, policy: str, workload: str, split_path: str | None) -> None:
    settings = Settings()
    cc = settings.classifier_config()
    items = {}
    with open(workload) as f:
        for line in f:
            it = json.loads(line)
            items[it["id"]] = it
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        doc = json.load(f)
    reqs = [r for r in doc["policies"][policy]["requests"] if r.get("backend") == "speculative"
            and str(r.get("status")) == "200" and r.get("engine_steps")
            and r.get("repeat", 1) == int(__import__("os").environ.get("REP", "1"))]
    reqs.sort(key=lambda r: r["sent_s"] + r["e2e_s"])
    lrn = Learner(settings.learner_config())
    has_copy = "copy_source" in inspect.signature(Observation).parameters
    reads: dict[str, list[float]] = defaultdict(list)
    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    # per request (decode tokens, decode steps, read): the second half's Σ tokens / read over Σ steps
    rows: dict[str, list[tuple[int, int, float]]] = defaultdict(list)
    split: dict[str, bool] = {}
    if not has_copy and split_path:
        with open(split_path) as sf:
            split = json.load(sf)
    for r in reqs:
        it = items[r["id"]]
        ep = "/v1/chat/completions" if "messages" in it["body"] else "/v1/completions"
        f = features(request_view(ep, it["body"]), cc)
        cls, bucket = classify(f, cc), temperature_bucket(f.temperature)
        key = f"{cls}/{bucket}"
        extra = (f.copy_source,) if has_copy else ()
        tps = lrn.per_request.for_request(lrn.tokens_per_step_posterior(cls, bucket), cls, bucket, f.max_tokens,
                                          f.max_tokens_given, f.prompt_tokens, f.structured_output, None,
                                          f.temperature, *extra)[1]
        copy = f.copy_source if has_copy else split.get(r["id"])
        split[r["id"]] = bool(copy)
        n, s = r["completion_tokens"], r["engine_steps"]
        for k in (key, f"{key}+{'copy' if copy else 'new'}"):
            reads[k].append(tps)
            sums[k][0] += n - 1 if s > 1 else n
            sums[k][1] += s - 1 if s > 1 else s
            rows[k].append((n - 1 if s > 1 else n, s - 1 if s > 1 else s, tps))
        kw = {"copy_source": f.copy_source} if has_copy else {}
        lrn.observe(Observation(role="speculative", task_class=cls, bucket=bucket, prompt_tokens=f.prompt_tokens,
                                completion_tokens=n, steps=s, ttft_s=r["ttft_s"] or 0.0, e2e_s=r["e2e_s"],
                                load_self=1.0, temperature=f.temperature, **kw))
    for key in sorted(sums):
        dn, ds = sums[key]
        if ds < 50:
            continue
        half = reads[key][len(reads[key]) // 2:]
        late = rows[key][len(rows[key]) // 2:]
        implied = sum(t / r for t, _, r in late) / sum(st for _, st, _ in late)
        print(f"{key:22s} delivered {dn / ds:.3f} ({ds} decode steps)  class estimate at the end "
              f"{lrn.tokens_per_step(*key.split('+')[0].split('/')):.3f}  per-request read, median of the second half "
              f"{statistics.median(half):.3f}  (mean {statistics.fmean(half):.3f}); decode steps the reads implied "
              f"/ taken (second half) {implied:.3f}")


    dump = __import__("os").environ.get("DUMP")
    if dump:
        rs = rows[dump]
        for t, st_, r in rs[len(rs) // 2:]:
            print(f"  tokens {t:4d} steps {st_:4d} delivered {t / st_:5.2f} read {r:5.2f}")
    tot_i = tot_s = 0.0
    for key, rs in rows.items():
        if "+" in key:
            continue
        late = rs[len(rs) // 2:]
        tot_i += sum(t / r for t, _, r in late)
        tot_s += sum(st for _, st, _ in late)
    print(f"ALL implied/taken (second half) {tot_i / max(tot_s, 1):.3f}")
    if has_copy and split_path:
        with open(split_path, "w") as sf:
            json.dump(split, sf)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
