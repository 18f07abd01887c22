"""Closed-loop streaming load like the calibration's `gpu/load.py`: c clients, n requests, fixed sizes."""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from dataclasses import dataclass

import aiohttp
import orjson

from .corpus import corpus_model


@dataclass(frozen=True, slots=True)
class LoadResult:
    url: str
    conc: int
    n: int
    errors: int
    mean_e2e: float  # simulated seconds
    mean_ttft: float
    mean_tpot: float
    tokens_per_chunk: float


def _words() -> list[str]:
    model = corpus_model()
    words = {t.strip() for t in model.bigram if t.strip().isalpha()}
    return sorted(words)


async def _one(session: aiohttp.ClientSession, url: str, body: dict[str, object]) -> tuple[float, float, int, int]:
    t0 = time.perf_counter()
    ttft: float | None = None
    chunks = tokens = 0
    async with session.post(url + "/v1/completions", json=body) as r:
        if r.status != 200:
            raise RuntimeError(f"status {r.status}: {(await r.text())[:200]}")
        async for raw in r.content:
            line = raw.strip()
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            d = orjson.loads(line[6:])
            if d.get("choices"):
                if ttft is None:
                    ttft = time.perf_counter() - t0
                chunks += 1
            if d.get("usage"):
                tokens = d["usage"]["completion_tokens"]
    return ttft or 0.0, time.perf_counter() - t0, chunks, tokens


async def closed_loop(
    url: str, conc: int, n: int, time_scale: float, in_words: int = 400, out_tokens: int = 256, seed: int = 0
) -> LoadResult:
    rng = random.Random(seed)
    words = _words()
    queue: asyncio.Queue[dict[str, object]] = asyncio.Queue()
    for _ in range(n):
        queue.put_nowait({
            "prompt": " ".join(rng.choice(words) for _ in range(in_words)), "max_tokens": out_tokens,
            "temperature": 0.0, "ignore_eos": True, "stream": True,
            "stream_options": {"include_usage": True, "continuous_usage_stats": True},
        })
    results: list[tuple[float, float, int, int]] = []
    errors = 0

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal errors
        while not queue.empty():
            body = queue.get_nowait()
            try:
                results.append(await _one(session, url, body))
            except (RuntimeError, aiohttp.ClientError):
                errors += 1

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(worker(session) for _ in range(conc)))
    s = time_scale
    tpots = [(e2e - ttft) / max(tok - 1, 1) / s for ttft, e2e, _, tok in results]
    return LoadResult(
        url=url, conc=conc, n=len(results), errors=errors,
        mean_e2e=statistics.mean(r[1] for r in results) / s if results else float("nan"),
        mean_ttft=statistics.mean(r[0] for r in results) / s if results else float("nan"),
        mean_tpot=statistics.mean(tpots) if tpots else float("nan"),
        tokens_per_chunk=sum(r[3] for r in results) / max(sum(r[2] for r in results), 1),
    )
