"""Pure, approximate index of the prompt prefixes each backend has likely cached (vLLM's automatic prefix
caching keeps the KV blocks of prompts it served until it needs the room, least recently used first).

A prompt is cut into text blocks of `BLOCK_CHARS` characters (~16 tokens, vLLM's block size, at 4 characters a
token) with chained hashes: a block's hash covers everything before it, so two prompts share their first k
hashes exactly when they share their first k blocks of text. Per backend the index holds the hashes of the
prompts the gateway sent there, least recently used evicted first, sized from the server's KV capacity
(`vllm:cache_config_info`: `num_gpu_blocks` × `block_size` tokens) and never above a fixed cap, whatever the
traffic: a client sending endless unique prompts only churns it. A prompt's blocks are inserted last block
first, so its first block is the most recently used and eviction takes a prefix from its end, as vLLM's free
queue does: what stays cached is a prefix, and a lookup can bisect.

The cost model then prefills only the tokens a candidate has not cached (`cached_tokens`): affinity and
speculation are traded in one number.

The capacity is in the gateway's own token estimate (characters / `chars_per_token`), and the server's cache
holds every client's prompts: `token_scale` compares the prompt tokens this process estimated it sent a server
with the prompt tokens that server says it looked up (`vllm:prefix_cache_queries`) over the same span, and the
index holds the KV capacity times that share (a tokenizer that makes 6 characters a token holds 1.5× the text
that 4 would; a gateway sending half a server's traffic keeps its prompts there half as long).
"""

from __future__ import annotations

import re
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Sequence

BLOCK_CHARS = 64  # characters per text block
MAX_PROMPT_BLOCKS = 4096  # blocks hashed per prompt at most (256 K characters): bounded CPU per request
SEPARATOR = b"\x1e"  # between the parts of a prompt (chat messages)

_CACHE_CONFIG = re.compile(r"^vllm:cache_config_info\{([^}]*)\}", re.MULTILINE)
_LABEL = re.compile(r'(\w+)="([^"]*)"')


def prompt_blocks(parts: Iterable[str], max_blocks: int = MAX_PROMPT_BLOCKS) -> tuple[int, ...]:
    """Chained 64-bit hashes (CRC-32 and Adler-32 run over the whole text so far) of the full blocks of the
    prompt's parts joined by `SEPARATOR`. Deterministic in every process (a helper process may parse)."""
    data = SEPARATOR.join(p.encode("utf-8", "surrogatepass") for p in parts)
    n = min(len(data) // BLOCK_CHARS, max_blocks)
    out = []
    crc, adler = 0, 1
    view = memoryview(data)
    for i in range(n):
        block = view[i * BLOCK_CHARS:(i + 1) * BLOCK_CHARS]
        crc, adler = zlib.crc32(block, crc), zlib.adler32(block, adler)
        out.append((crc << 32) | adler)
    return tuple(out)


def kv_capacity_tokens(metrics_text: str) -> int | None:
    """`num_gpu_blocks` × `block_size` from a vLLM scrape's `vllm:cache_config_info`, or None."""
    m = _CACHE_CONFIG.search(metrics_text)
    if m is None:
        return None
    labels = dict(_LABEL.findall(m.group(1)))
    try:
        blocks, size = int(labels["num_gpu_blocks"]), int(labels["block_size"])
    except (KeyError, ValueError):
        return None
    return blocks * size if blocks > 0 and size > 0 else None


class PrefixIndex:
    """The block hashes one backend likely holds, at most `capacity` of them, least recently used evicted."""

    __slots__ = ("_blocks", "capacity", "hard_cap")

    def __init__(self, capacity: int, hard_cap: int) -> None:
        self.hard_cap = max(hard_cap, 1)
        self.capacity = min(max(capacity, 1), self.hard_cap)
        self._blocks: OrderedDict[int, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._blocks)

    def resize(self, capacity: int) -> None:
        self.capacity = min(max(capacity, 1), self.hard_cap)
        self._evict()

    def match(self, blocks: Sequence[int]) -> int:
        """How many leading blocks of `blocks` are held (bisection: what is held is a prefix of each prompt)."""
        held = self._blocks
        if not blocks or blocks[0] not in held:
            return 0
        lo, hi = 1, len(blocks)  # blocks[:lo] held; find the largest such lo
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if blocks[mid - 1] in held:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def insert(self, blocks: Sequence[int]) -> None:
        """The prompt was sent here: its blocks become the most recently used, the first block most of all."""
        held = self._blocks
        for h in reversed(blocks[:self.capacity]):
            held[h] = None
            held.move_to_end(h)
        self._evict()

    def _evict(self) -> None:
        held = self._blocks
        while len(held) > self.capacity:
            held.popitem(last=False)


def cached_tokens(matched_blocks: int, prompt_tokens: int, chars_per_token: float) -> int:
    """Prompt tokens a match of `matched_blocks` text blocks saves (the last token is always computed)."""
    if matched_blocks <= 0:
        return 0
    return max(min(int(matched_blocks * BLOCK_CHARS / chars_per_token), prompt_tokens - 1), 0)


MIN_SCALE_TOKENS = 200_000  # server prompt tokens before its scale is read (a few requests in flight skew less)
SCALE_RANGE = (0.05, 4.0)


def token_scale(sent_tokens: float, server_tokens: float) -> float | None:
    """Estimated prompt tokens sent per prompt token the server looked up, over a span (deltas); None until the
    server has looked up `MIN_SCALE_TOKENS`, or if nothing was sent; bounded to `SCALE_RANGE`."""
    if server_tokens < MIN_SCALE_TOKENS or sent_tokens <= 0:
        return None
    return min(max(sent_tokens / server_tokens, SCALE_RANGE[0]), SCALE_RANGE[1])


def capacity_blocks(kv_tokens: int, chars_per_token: float) -> int:
    """Text blocks that hold as many tokens as the server's KV cache."""
    return max(int(kv_tokens * chars_per_token / BLOCK_CHARS), 1)
