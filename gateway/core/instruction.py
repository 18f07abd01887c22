"""Pure: the part of a message that asks, not the material it pastes.

A request that pastes code or a document and asks for something about it puts the ask before or after the pasted
block ("Refactor this:\\n```...```", "```...```\\n\\nRename `x` to `y`; return the complete updated function"). What
an n-gram (prompt lookup) drafter will find depends on that ask: an edit returns the block it was given (on the
emulated n-gram fleet an Azure-code edit ran at ~2.5 tokens a decode step), a question about the block writes new
text (~1.1 to 1.3), though both carry the same block. The words of the block itself say nothing about the ask (code
comments say "remove", change logs say "fix"), so `classify.copy_kind` reads only this text.

Blocks are Markdown fences, paired in order. A last fence left unpaired opens a block that runs to the end when
`OPEN_BLOCK_CHARS` or more follow it (a prompt cut off inside its block); fewer, it is inline text of the ask
("... in a ```python block."). Without fences the ask is the end of the message.
"""

from __future__ import annotations

FENCE = "```"
ASK_CHARS = 400  # of the text before the first block (its last paragraph) and after the last one, at most
OPEN_BLOCK_CHARS = 160  # text after an unpaired last fence that makes it an open block (about four lines of code)


def instruction_text(text: str) -> str:
    """The ask of `text` (see the module docstring): at most 2 × `ASK_CHARS` characters."""
    fences = []
    at = text.find(FENCE)
    while at >= 0:
        fences.append(at)
        at = text.find(FENCE, at + len(FENCE))
    if not fences:
        return text[-ASK_CHARS:]
    head = text[: fences[0]].rstrip().rsplit("\n\n", 1)[-1][-ASK_CHARS:]
    if len(fences) % 2 and len(text) - fences[-1] - len(FENCE) >= OPEN_BLOCK_CHARS:
        opened = fences.pop()  # an open block to the end: what follows its fence is pasted, not asked
        return head if not fences else head + "\n" + text[fences[-1] + len(FENCE) : opened].strip()[:ASK_CHARS]
    closing = fences[-1] if len(fences) % 2 == 0 else (fences[-2] if len(fences) > 1 else -len(FENCE))
    tail = text[closing + len(FENCE):] if closing >= 0 else text[fences[-1]:]
    return head + "\n" + tail.strip()[:ASK_CHARS]
