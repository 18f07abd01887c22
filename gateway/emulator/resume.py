"""Resumed requests, as vLLM serves them: a request that continues an answer another server began.

Chat: the partial answer is the final assistant message, with vLLM's `continue_final_message: true,
add_generation_prompt: false` (the template leaves that message open and the model continues it; vLLM refuses
both flags at once with a 400). Completions: the prompt is the original prompt plus the text so far. Either way
the whole resumed prompt, partial answer included, is prefilled again (its tokens count as prompt tokens), and
the answer is the rest of the request's reference: what follows the partial text.
"""

from __future__ import annotations

MIN_MATCH_CHARS = 8  # a completion's prompt must end with at least this much of the reference to continue it


def continued_reference(reference: str, partial: str | None, prompt: str) -> str:
    """What is left of `reference` after the text already written: after `partial` (a chat's open final assistant
    message) when the reference starts with it, else after the longest start of the reference (at least
    `MIN_MATCH_CHARS`, and not all of it: a prompt that ends with the whole reference asks to copy it) that the
    prompt ends with (a completion resumed as prompt + text so far); the whole reference when the request
    continues nothing."""
    if partial:
        if reference.startswith(partial):
            return reference[len(partial):]
        prompt = partial  # a partial answer that is not the reference's start: match its end instead
    for k in range(len(reference) - 1, MIN_MATCH_CHARS - 1, -1):
        if prompt.endswith(reference[:k]):
            return reference[k:]
    return reference
