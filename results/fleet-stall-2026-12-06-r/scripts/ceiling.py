# ruff: noqa  -- a quick analysis script, kept as it ran
"""The prefix-cache ceiling of a Mooncake window: one server, an infinite cache, the trace's 512-token hash blocks.
A request hits the longest leading run of its blocks seen in any earlier request (the ids chain: an id names its
prefix). Hit rate = hit blocks / blocks (and hit tokens / prompt tokens, the last block partial).
python ceiling.py TRACE.jsonl WORKLOAD.jsonl...   (the workload's `trace.row` says which trace rows it holds)"""
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for w in sys.argv[2:]:
    seen, hit_b, all_b, hit_t, all_t = set(), 0, 0, 0, 0
    for line in open(w):
        r = rows[json.loads(line)["trace"]["row"]]
        ids, n = r["hash_ids"], r["input_length"]
        lead = 0
        while lead < len(ids) and ids[lead] in seen:
            lead += 1
        hit_b += lead; all_b += len(ids)
        hit_t += min(lead * 512, n); all_t += n
        seen.update(ids)
    print(f"{w}: blocks {hit_b}/{all_b} = {hit_b / all_b:.3f}, tokens {hit_t / all_t:.3f}")
