"""vLLM's automatic prefix caching, by block hashes: a prompt whose leading full blocks were computed
before (and not evicted) skips their prefill."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence


def block_hashes(tokens: Sequence[str], block_size: int) -> list[int]:
    """Chained hashes of the full blocks of `tokens` (a block's hash covers everything before it)."""
    out: list[int] = []
    prev = 0
    for i in range(0, len(tokens) - block_size + 1, block_size):
        prev = hash((prev, tuple(tokens[i : i + block_size])))
        out.append(prev)
    return out


class PrefixCache:
    """LRU set of cached block hashes, at most `capacity` blocks."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._blocks: OrderedDict[int, None] = OrderedDict()

    def hit_blocks(self, hashes: Sequence[int]) -> int:
        """How many leading blocks are cached (and mark them recently used)."""
        n = 0
        for h in hashes:
            if h not in self._blocks:
                break
            self._blocks.move_to_end(h)
            n += 1
        return n

    def insert(self, hashes: Sequence[int]) -> None:
        for h in hashes:
            self._blocks[h] = None
            self._blocks.move_to_end(h)
        while len(self._blocks) > self.capacity:
            self._blocks.popitem(last=False)
