"""Which models each backend serves: its `/v1/models` (LoRA adapters included: vLLM lists each adapter as a
model whose `parent` is the base), read when the gateway starts and refreshed every `health_interval_s`.

A request goes only to backends that serve its `model`; a model no backend serves gets an OpenAI-shaped 404
`model_not_found`. The fleet's topology stays discoverable: `SPECGATE_BACKENDS` names no model. A backend
whose `/v1/models` never answered is assumed to serve every model (a server without the endpoint still
works as it did); once it answered, its last good listing holds until the next one. The gateway's own
`/v1/models` lists the union of the listings.

The same loop reads each backend's KV capacity (`vllm:cache_config_info`: `num_gpu_blocks` × `block_size`
tokens) for the prefix index (`gateway.core.prefix_index`), until one scrape has said it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

import aiohttp
import orjson

from gateway.core.prefix_index import kv_capacity_tokens
from gateway.core.protocol import GatewayError
from gateway.logevents import log_event

log = logging.getLogger("specgate.models")

MAX_MODELS_PER_BACKEND = 1024  # a listing longer than this is cut (bounded memory; vLLM serves a few)
MAX_LISTING_BYTES = 4 * 1024 * 1024
MAX_METRICS_BYTES = 8 * 1024 * 1024
TIMEOUT_S = 5.0

Card = dict[str, Any]


class ModelNotFound(GatewayError):
    """The request's `model` is served by no backend (OpenAI's shape: 404, `model_not_found`)."""

    status: ClassVar[int] = 404
    type: ClassVar[str] = "invalid_request_error"
    default_code: ClassVar[str | None] = "model_not_found"


def model_not_found(model: str) -> ModelNotFound:
    return ModelNotFound(f"The model `{model[:200]}` does not exist or you do not have access to it.",
                         param="model")


def parse_listing(body: bytes) -> list[Card] | None:
    """The model cards of a `/v1/models` answer (entries with a string `id`), or None if it is not one."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    entries = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        return None
    return [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str) and e["id"]][
        :MAX_MODELS_PER_BACKEND]


class ServedModels:
    """Per backend name: the model ids it serves (None: not known yet) and their cards."""

    def __init__(self, names: Iterable[str]) -> None:
        self._models: dict[str, frozenset[str] | None] = dict.fromkeys(names)
        self._cards: dict[str, list[Card]] = {}
        self.version = 0  # bumped whenever a listing changes (memos of who serves what key on it)
        self._off: dict[str, frozenset[str]] = {}  # model -> backends that do not serve it, for this version

    def set(self, name: str, cards: Sequence[Card]) -> None:
        models = frozenset(str(c["id"]) for c in cards)
        self._cards[name] = list(cards)
        if self._models.get(name) != models:
            self._models[name] = models
            self.version += 1
            self._off.clear()

    def models_of(self, name: str) -> frozenset[str] | None:
        return self._models.get(name)

    def known(self) -> bool:
        return any(m is not None for m in self._models.values())

    def not_serving(self, model: str) -> frozenset[str]:
        """Backends known not to serve `model` (memoised per model until a listing changes)."""
        off = self._off.get(model)
        if off is None:
            off = frozenset(n for n, m in self._models.items() if m is not None and model not in m)
            if len(self._off) >= 4 * MAX_MODELS_PER_BACKEND:  # unknown names from clients must not grow it
                self._off.clear()
            self._off[model] = off
        return off

    def served_anywhere(self, model: str) -> bool:
        """Whether some backend serves `model` or may (its listing not known yet)."""
        return len(self.not_serving(model)) < len(self._models)

    def distinct(self) -> int:
        """How many different model sets the fleet serves (1: one model everywhere, or nothing known)."""
        return len({m for m in self._models.values() if m is not None}) or 1

    def listing(self) -> list[Card]:
        """The union of the backends' cards, first listing of an id wins, in backend order."""
        merged: dict[str, Card] = {}
        for name in self._models:
            for card in self._cards.get(name, []):
                merged.setdefault(str(card["id"]), card)
        return list(merged.values())

    def state(self) -> dict[str, list[str] | None]:
        return {n: None if m is None else sorted(m) for n, m in self._models.items()}


Fetch = Callable[[str, str], Awaitable[bytes | None]]  # (base url, path) -> body of a 200 answer, or None


def session_fetch(session: aiohttp.ClientSession, headers: Mapping[str, str]) -> Fetch:
    """A `Fetch` through an aiohttp session (the one pass-throughs use), bodies capped."""

    async def fetch(url: str, path: str) -> bytes | None:
        limit = MAX_METRICS_BYTES if path == "/metrics" else MAX_LISTING_BYTES
        try:
            async with session.get(url + path, headers=dict(headers), allow_redirects=False,
                                   timeout=aiohttp.ClientTimeout(total=TIMEOUT_S)) as r:
                if r.status != 200:
                    return None
                body = await r.content.read(limit + 1)
                return None if len(body) > limit else body
        except (aiohttp.ClientError, OSError, TimeoutError, ValueError):
            return None

    return fetch


async def refresh(served: ServedModels, backends: Sequence[tuple[str, str]], fetch: Fetch,
                  on_capacity: Callable[[str, int], None] | None = None,
                  capacity_known: set[str] | None = None) -> None:
    """One round: each (name, url)'s listing; its KV capacity once (`capacity_known` remembers whom)."""

    async def one(name: str, url: str) -> None:
        body = await fetch(url, "/v1/models")
        cards = None if body is None else parse_listing(body)
        if cards is not None:
            before = served.models_of(name)
            served.set(name, cards)
            if before != served.models_of(name):
                log_event(log, logging.INFO, "models", backend=name, models=sorted(c["id"] for c in cards)[:16])
        if on_capacity is not None and capacity_known is not None and name not in capacity_known:
            text = await fetch(url, "/metrics")
            tokens = None if text is None else kv_capacity_tokens(text.decode("utf-8", "replace"))
            if tokens is not None:
                capacity_known.add(name)
                on_capacity(name, tokens)

    await asyncio.gather(*(one(name, url) for name, url in backends))


async def run_refresh(served: ServedModels, backends: Callable[[], Sequence[tuple[str, str]]], fetch: Fetch,
                      interval_s: float, on_capacity: Callable[[str, int], None] | None = None) -> None:
    """`refresh` every `interval_s`, the first at once."""
    known: set[str] = set()
    while True:
        try:
            await refresh(served, backends(), fetch, on_capacity, known)
        except Exception as exc:  # a bad answer must not end discovery
            log_event(log, logging.WARNING, "models_refresh_failed", why=type(exc).__name__)
        await asyncio.sleep(interval_s)
