"""What one shadow replay costs the gateway: the edge's whole path (prompt and text out of the bytes, the replay)
on every request of a workload, as the gateway does it after a response (prompt from the request body, text from
an SSE stream of ~one chunk a token).

    .venv/bin/python results/shadow-2026-12-05-e/cost.py W.jsonl [W2.jsonl ...]
"""
from __future__ import annotations

import json
import sys
import time

import orjson

from gateway.core.shadow_lookup import LookupConfig, replay_text, tokenize
from gateway.shadow import prompt_text, stream_text


def sse(text: str) -> bytes:
    return b"".join(b"data: " + orjson.dumps({"choices": [{"delta": {"content": tok}}]}) + b"\n\n"
                    for tok in tokenize(text)) + b"data: [DONE]\n\n"


def main() -> None:
    cfg = LookupConfig()
    us: list[float] = []
    for path in sys.argv[1:]:
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                payload, chat = orjson.dumps(r["body"]), r["endpoint"].endswith("chat/completions")
                stream = sse(r["reference"][:4000])
                t0 = time.perf_counter()
                prompt = prompt_text(payload, chat) or ""
                replay_text(prompt, stream_text(stream, chat), cfg)
                us.append((time.perf_counter() - t0) * 1e6)
    us.sort()
    n = len(us)
    print(f"requests {n}: median {us[n // 2]:.0f} us, p90 {us[9 * n // 10]:.0f} us, p99 {us[99 * n // 100]:.0f} us, "
          f"max {us[-1]:.0f} us, mean {sum(us) / n:.0f} us")


if __name__ == "__main__":
    main()
