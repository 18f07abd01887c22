"""A small deterministic tokenizer and the target's default continuation.

`tokenize` approximates a byte-level BPE's split (GPT-2's pre-tokenizer pattern): a word with its leading
space is one token, digits come in groups of at most three, punctuation runs are one token, and whitespace
runs are their own tokens. `"".join(tokenize(t)) == t` for every string, so the emulated target streams
exactly the reference text.
"""

from __future__ import annotations

import itertools
import random
import re
import zlib
from collections.abc import Sequence

_TOKEN = re.compile(
    r"'(?:s|t|re|ve|m|ll|d)\b"  # English contractions, as GPT-2 splits them
    r"| ?[^\W\d_]{1,12}"  # a word (long words split every 12 letters) with its leading space
    r"| ?\d{1,3}"  # digits in groups of three
    r"| ?[^\s\w]+|_+"  # a punctuation run
    r"|\s+(?!\S)|\s+",  # whitespace runs (the last space attaches to the next word)
)

# Without a reference and without `max_tokens`, the continuation ends (EOS) after this many tokens.
DEFAULT_CONTINUATION_TOKENS = 256
# Probability that the continuation jumps to a random prompt token instead of following the prompt's
# bigram statistics: keeps an unlabelled continuation from being a pure copy of the prompt.
_JUMP_PROBABILITY = 0.25


def tokenize(text: str) -> list[str]:
    """Split text into tokens whose concatenation is the text."""
    return _TOKEN.findall(text)


def stable_seed(*parts: str) -> int:
    """A seed that is the same in every process (unlike `hash`)."""
    return zlib.crc32("\x1f".join(parts).encode("utf-8", "surrogatepass"))


def continuation(prompt_tokens: Sequence[str], n: int, seed: int) -> list[str]:
    """A deterministic continuation of the prompt: a seeded walk of the prompt's bigram model.

    At each position the walk follows a successor of the previous token seen in the prompt (chosen by
    the seeded RNG), or with probability 0.25 jumps to a random prompt token. The same prompt and seed
    always give the same text, like greedy decoding of a real model.
    """
    if n <= 0:
        return []
    vocab = [t for t in prompt_tokens if t.strip()] or ["the", " model", " says", "."]
    successors: dict[str, list[str]] = {}
    for a, b in itertools.pairwise(prompt_tokens):
        successors.setdefault(a, []).append(b)
    rng = random.Random(seed)
    prev = prompt_tokens[-1] if prompt_tokens else vocab[0]
    out: list[str] = []
    for _ in range(n):
        nxt = successors.get(prev)
        token = rng.choice(nxt) if nxt and rng.random() >= _JUMP_PROBABILITY else rng.choice(vocab)
        out.append(token)
        prev = token
    return out
