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
    """The ask of `text` (see the module docstring): at most 2 × `ASK_CHARS` characters. Three searches and a count,
    whatever the number of fences (a prompt of thousands costs no more)."""
    first = text.find(FENCE)
    if first < 0:
        return text[-ASK_CHARS:]
    head = text[:first].rstrip().rsplit("\n\n", 1)[-1][-ASK_CHARS:]
    fences, last = text.count(FENCE), text.rfind(FENCE)
    prev = text.rfind(FENCE, 0, last) if fences > 1 else -1  # the fence before the last one
    if fences % 2 == 0:  # every block closed: the ask follows the last one
        return head + "\n" + text[last + len(FENCE):].strip()[:ASK_CHARS]
    if len(text) - last - len(FENCE) >= OPEN_BLOCK_CHARS:  # an open block to the end: what follows it is pasted
        return head if prev < 0 else head + "\n" + text[prev + len(FENCE) : last].strip()[:ASK_CHARS]
    # an unpaired fence in the ask's own text: the ask runs from the last closed block (or the fence) to the end
    return head + "\n" + (text[prev + len(FENCE):] if prev >= 0 else text[first:]).strip()[:ASK_CHARS]
