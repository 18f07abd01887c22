#!/usr/bin/env python3
"""Warm freshly started vLLM servers up before they take traffic (stdlib only).

vLLM's start-up warm-up (memory profiling, CUDA graph capture) runs greedy batches only. The sampler's Triton
kernels (top-k / top-p: `_topk_topp_kernel`, and the speculative server's rejection sampler) are compiled on their
first use, once per shape they specialise on (top-k on or off, top-p on or off, the batch's size), and a compile
stalls every request on the server for the ~1-2 s it takes. vLLM logs it as `Triton kernel JIT compilation during
inference`. On an H100 the first sampled burst on a fresh n-gram server stalled it for ~2 s, and a bursty trace read
1.6x the baseline alone (deploy/gpu/results/2026-12-06-h100-migration-n/).

This script sends bursts of short requests, all at once per burst, for each sampling shape (greedy, temperature only,
top-p, top-k, both, and a mix of greedy and top-p in one batch) at each concurrency (1, 2, 4, ... 64 by default), to
every server named, one server at a time. Each burst prints its wall time: a compile shows as a burst slower than
its neighbours. It exits 1 if any request failed.

    python deploy/warm_vllm.py http://127.0.0.1:8001 http://127.0.0.1:8002
    python deploy/warm_vllm.py --max-concurrency 128 --max-tokens 24 http://gpu-3:8002

`launch_pair.py` runs it on both servers once they are healthy (`--no-warm-up` skips it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

# sampling shapes: each a set of OpenAI / vLLM sampling fields; None marks the mixed batch (greedy and top-p rows)
SHAPES: dict[str, dict[str, Any] | None] = {
    "greedy": {"temperature": 0.0},
    "temperature": {"temperature": 0.8},
    "top_p": {"temperature": 0.8, "top_p": 0.95},
    "top_k": {"temperature": 0.8, "top_k": 40},
    "top_k+top_p": {"temperature": 0.8, "top_k": 40, "top_p": 0.95},
    "mixed": None,
}
# a prompt that repeats itself, so that an n-gram server drafts and verifies several tokens a step
PROMPT = ("The order {i} has items apple, pear, plum; the order {i} has items apple, pear, plum; "
          "the order {i} has items apple, pear,")


@dataclass(frozen=True)
class Burst:
    """Requests sent all at once: their bodies, and what the burst warms (a shape at a concurrency)."""

    shape: str
    concurrency: int
    bodies: tuple[dict[str, Any], ...]


def concurrencies(limit: int) -> list[int]:
    """1, 2, 4, ... up to `limit`, and `limit` itself: the batch sizes a burst puts into one engine step."""
    out, c = [], 1
    while c < limit:
        out.append(c)
        c *= 2
    return [*out, max(limit, 1)]


def plan(model: str, max_concurrency: int = 64, max_tokens: int = 16,
         shapes: dict[str, dict[str, Any] | None] | None = None) -> list[Burst]:
    """Every shape at every concurrency, each burst's requests told apart by their prompts (no prefix-cache hit
    shortens another's prefill). Pure: the same arguments give the same bursts."""
    bursts: list[Burst] = []
    n = 0
    for shape, fields in (SHAPES if shapes is None else shapes).items():
        for c in concurrencies(max_concurrency):
            bodies = []
            for k in range(c):
                own = fields if fields is not None else SHAPES["greedy" if k % 2 == 0 else "top_p"]
                assert own is not None
                bodies.append({"model": model, "prompt": PROMPT.format(i=n), "max_tokens": max_tokens,
                               "ignore_eos": True, **own})
                n += 1
            bursts.append(Burst(shape, c, tuple(bodies)))
    return bursts


def post(url: str, body: dict[str, Any], timeout_s: float) -> int:
    """One completion: its HTTP status (0 when the server could not be reached)."""
    req = urllib.request.Request(url + "/v1/completions", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            resp.read()
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (urllib.error.URLError, OSError):
        return 0


def served_model(url: str, timeout_s: float = 10.0) -> str:
    """The first model a server lists on /v1/models."""
    with urllib.request.urlopen(url + "/v1/models", timeout=timeout_s) as resp:
        data = json.loads(resp.read())
    return str(data["data"][0]["id"])


def warm(url: str, bursts: list[Burst], timeout_s: float = 120.0, out: Any = sys.stdout) -> tuple[int, int]:
    """Send each burst to `url`, all of its requests at once, a burst after the last one ended: (ok, failed)."""
    ok = failed = 0
    width = max((b.concurrency for b in bursts), default=1)
    with ThreadPoolExecutor(max_workers=width) as pool:
        for burst in bursts:
            t0 = time.perf_counter()
            statuses = list(pool.map(lambda body: post(url, body, timeout_s), burst.bodies))
            good = sum(1 for s in statuses if s == 200)
            ok, failed = ok + good, failed + len(statuses) - good
            print(f"{url} {burst.shape:<12} c={burst.concurrency:<3} {time.perf_counter() - t0:6.2f} s"
                  f"{'' if good == len(statuses) else f'  {len(statuses) - good} failed: {sorted(set(statuses))}'}",
                  file=out, flush=True)
    return ok, failed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("urls", nargs="+", help="server base URLs (no /v1)")
    p.add_argument("--model", help="model name (default: each server's first on /v1/models)")
    p.add_argument("--max-concurrency", type=int, default=64, help="the largest burst (default 64)")
    p.add_argument("--max-tokens", type=int, default=16, help="tokens each request generates (default 16)")
    p.add_argument("--timeout-s", type=float, default=120.0, help="per request (a compile takes seconds)")
    args = p.parse_args(argv)
    if args.max_concurrency < 1 or args.max_tokens < 1:
        p.error("--max-concurrency and --max-tokens must be at least 1")
    failed = 0
    for url in (u.rstrip("/") for u in args.urls):
        try:
            model = args.model or served_model(url)
        except (urllib.error.URLError, OSError, ValueError, KeyError, IndexError) as exc:
            print(f"{url}: cannot read /v1/models ({exc})", file=sys.stderr)
            failed += 1
            continue
        t0 = time.perf_counter()
        ok, bad = warm(url, plan(model, args.max_concurrency, args.max_tokens), args.timeout_s)
        failed += bad
        print(f"{url}: {ok} requests warmed in {time.perf_counter() - t0:.1f} s, {bad} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
