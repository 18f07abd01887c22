"""vLLM's automatic prefix caching, by block hashes: a prompt whose leading full blocks were computed
before (and not evicted) skips their prefill.

As in vLLM, the full blocks of *generated* tokens are cached too, chained after the prompt's: a
conversation's next turn, whose prompt repeats the last prompt and the reply, hits its own history. The
chain continues over the text the next turn will carry: the emulator's chat template (`wire.chat_prompt`)
ends a prompt with the generation prompt `assistant:` and renders the reply in the next turn as
`assistant: {reply}`, so the reply follows it after one space there (a real template puts the reply's tokens
straight after its generation prompt, which is what this reproduces); a completion prompt is followed by
the reply as it is.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from .text import tokenize

GENERATION_PROMPT = "assistant:"  # how `wire.chat_prompt` ends a chat prompt


class BlockChain(list[int]):
    """Chained hashes of the full blocks of a prompt, and the prompt's tokens after its last full block
    (`tail`), from which the chain goes on over the generated tokens."""

    tail: tuple[str, ...] = ()


def _chain(tokens: Sequence[str], block_size: int, prev: int = 0) -> BlockChain:
    out = BlockChain()
    full = len(tokens) - len(tokens) % block_size
    for i in range(0, full, block_size):
        prev = hash((prev, tuple(tokens[i : i + block_size])))
        out.append(prev)
    out.tail = tuple(tokens[full:])
    return out


def block_hashes(tokens: Sequence[str], block_size: int) -> BlockChain:
    """Chained hashes of the full blocks of `tokens` (a block's hash covers everything before it)."""
    return _chain(tokens, block_size)


def output_block_hashes(prompt: Sequence[int], generated: Sequence[str], block_size: int) -> list[int]:
    """The hashes of the full blocks that the generated tokens complete after the prompt's (`prompt` from
    `block_hashes`; `generated` without EOS, which has no text): what the next turn's prompt will hash to
    past the prompt's own blocks."""
    tail = "".join(getattr(prompt, "tail", ()))
    reply = "".join(generated)
    if not reply:
        return []
    joiner = " " if tail.endswith(GENERATION_PROMPT) else ""
    return list(_chain(tokenize(tail + joiner + reply), block_size, prev=prompt[-1] if prompt else 0))


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
        """Cache (or refresh) a chain's blocks in reverse, as vLLM frees a request's blocks ("in reverse order so
        that the tail blocks are evicted first"): under pressure a prompt loses its tail, and keeps the head that
        its next turn and its siblings share."""
        for h in reversed(hashes):
            self._blocks[h] = None
            self._blocks.move_to_end(h)
        while len(self._blocks) > self.capacity:
            self._blocks.popitem(last=False)
