# ruff: noqa  -- an analysis script, kept as it ran
import re
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
def ask_overlap(ask: str, text: str) -> float:
    """Share of the ask's code-like words (backticked spans' identifiers) found elsewhere in the message."""
    spans = re.findall(r"`([^`]+)`", ask)
    words = {w for s in spans for w in WORD.findall(s)}
    if not words:
        return -1.0
    ctx = set(WORD.findall(text.replace(ask, " ")))
    return sum(w in ctx for w in words) / len(words)
