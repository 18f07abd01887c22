"""Pure request classification: a `RequestView` in, `Features` and a class name out.

Classes (documented in the README):
- `long_context`: the prompt is at least `long_prompt_tokens` (prefill dominates; speculation cannot help it);
- `structured`: JSON mode / JSON schema / tools / vLLM structured-output fields, or JSON/SQL cues in the prompt;
- `code`: code in the prompt or a request to write or edit code;
- `extraction`: "extract / list / find ... from the text" style prompts (the answer copies the input);
- `creative`: an explicit temperature at or above `creative_temperature`, or story/poem style prompts;
- `chat`: everything else.
The temperature bucket (`greedy`, `low`, `high`) is a separate feature; the learner keys on both.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

from gateway.core.domain import TASK_CLASSES, TaskClass
from gateway.core.protocol import RequestView
from gateway.core.records import record

CLASSES: tuple[TaskClass, ...] = TASK_CLASSES
TEMPERATURE_BUCKETS = ("greedy", "low", "high")

# Word cues match whole words: the lower-cased prompt with punctuation and whitespace turned into spaces,
# padded, searched for " cue " (`in` and `str.translate` run at C speed, where a case-insensitive regex
# alternation cost milliseconds on a long prompt, measured with `specgate bench-decision`). Symbol cues match
# the raw lower-cased text. ("history" is not a story, "trust" is not Rust.)
_SEPARATORS = str.maketrans({c: " " for c in string.punctuation + string.whitespace if c != "_"})


def _words(*cues: str) -> tuple[str, ...]:
    return tuple(f" {cue} " for cue in cues)


_JSON_WORDS, _JSON_SYMBOLS = _words("json", "schema", "yaml"), ('{"',)
_SQL_WORDS = _words("sql", "create table", "insert into")
_CODE_WORDS = _words("def", "import", "function", "refactor", "rewrite", "implement", "fix the bug", "unit test",
                     "python", "javascript", "typescript", "rust", "golang")
_CODE_SYMBOLS = ("```", "#include")
_CLASS_DEF = re.compile(r"\bclass \w+[(:]")  # searched only from the first "class "
_EXTRACTION_WORDS = _words("extract", "list all", "list every", "find all", "which of the", "quote",
                           "from the following", "from the above", "from the text", "from the document",
                           "according to the", "answer using only")
# A copy source: text in the prompt that the answer may repeat (an edit returns the code it was given; an n-gram
# drafter then finds its tokens in the prompt: 2.25 tokens a step for Azure-code edits against 1.20 for new code).
# Either a delimited block (a Markdown fence, closed or cut off) of at least `COPY_MIN_CHARS`, or a request to
# change text the user pasted ("here is my file ... change X"), fenced or not.
COPY_MIN_CHARS = 160  # about four lines of code
_EDIT_WORDS = _words("change", "modify", "update", "rename", "refactor", "rewrite", "edit", "fix", "replace",
                     "remove", "convert", "reformat", "translate", "correct")
_PASTE_WORDS = _words("here is my", "here s my", "here is the", "here is a", "below is", "the following code",
                      "the following text", "this code", "my code", "this file", "my file", "the code below",
                      "the code above", "the text below", "the text above", "this function", "this class")
# What the ask does with a copy source (`copy_kind`): edit it (the answer returns the block, changed) or not.
_ASK_EDIT_WORDS = _EDIT_WORDS + _words("add", "insert", "delete", "keep everything", "unchanged", "updated",
                                       "make this", "make it", "same code", "as is", "verbatim")
COPY_KINDS = ("edit", "ref", "new")  # `copy_kind`; with copy kinds off: ("copy", "new")
_CREATIVE_WORDS = _words("story", "poem", "haiku", "sonnet", "lyrics", "imagine", "fiction", "creative",
                         "brainstorm", "fairy tale", "novel")


def _any(text: str, cues: tuple[str, ...]) -> bool:
    for cue in cues:  # noqa: SIM110 -- a plain loop: a generator costs more than the searches themselves
        if cue in text:
            return True
    return False


def _code(text: str, words: str) -> bool:
    if _any(words, _CODE_WORDS) or _any(text, _CODE_SYMBOLS):
        return True
    at = text.find("class ")
    return at >= 0 and _CLASS_DEF.search(text, max(at - 1, 0)) is not None


def _sql(text: str, words: str) -> bool:
    if _any(words, _SQL_WORDS):
        return True
    at = text.find("select ")
    return at >= 0 and text.find(" from ", at, at + 300) >= 0


def _copy_source(text: str, words: str) -> bool:
    at = text.find("```")
    while at >= 0:
        end = text.find("```", at + 3)
        if (len(text) if end < 0 else end) - at - 3 >= COPY_MIN_CHARS:
            return True
        if end < 0:
            return False
        at = text.find("```", end + 3)
    return _any(words, _EDIT_WORDS) and _any(words, _PASTE_WORDS)


def copy_kind(copy_source: bool, instruction: str) -> str:
    """How the answer is likely to use the prompt, for an n-gram drafter: `edit` (a copy source and an ask to change
    it: the answer returns it changed), `ref` (a copy source the ask does not change: the answer is about it), `new`
    (no copy source). Reads the ask only (`core.instruction`), not the block's own words."""
    if not copy_source:
        return "new"
    return "edit" if _any(f" {instruction.lower().translate(_SEPARATORS)} ", _ASK_EDIT_WORDS) else "ref"


@dataclass(frozen=True, slots=True)
class ClassifierConfig:
    creative_temperature: float
    long_prompt_tokens: int
    chars_per_token: float
    default_max_tokens: int
    copy_kinds: bool = False  # `Features.copy_kind` edit / ref / new (else copy / new, as `copy_source` says)


@record
class Features:
    endpoint: str
    temperature: float
    temperature_given: bool
    top_p: float
    prompt_tokens: int
    max_tokens: int
    max_tokens_given: bool
    n: int
    stream: bool
    json_mode: bool
    tools: bool
    structured_fields: bool
    json_cue: bool
    sql_cue: bool
    code_cue: bool
    extraction_cue: bool
    creative_cue: bool
    copy_source: bool = False  # the prompt holds text the answer may repeat (`_copy_source`)
    copy_kind: str = "new"  # what the ask does with it (`copy_kind`); keys the acceptance cells

    @property
    def structured_output(self) -> bool:
        return self.json_mode or self.tools or self.structured_fields


def temperature_bucket(temperature: float) -> str:
    if temperature <= 0.05:
        return "greedy"
    if temperature < 0.7:
        return "low"
    return "high"


def features(view: RequestView, config: ClassifierConfig) -> Features:
    text = view.cue_text.lower()
    words = f" {text.translate(_SEPARATORS)} "
    copy = _copy_source(text, words)
    return Features(
        endpoint=view.endpoint,
        temperature=view.temperature,
        temperature_given=view.temperature_given,
        top_p=view.top_p,
        prompt_tokens=int(view.prompt_chars / config.chars_per_token) + 1,
        max_tokens=view.max_tokens if view.max_tokens is not None else config.default_max_tokens,
        max_tokens_given=view.max_tokens is not None,
        n=view.n,
        stream=view.stream,
        json_mode=view.response_format in ("json_object", "json_schema"),
        tools=view.has_tools,
        structured_fields=view.has_structured_fields,
        json_cue=_any(words, _JSON_WORDS) or _any(text, _JSON_SYMBOLS),
        sql_cue=_sql(text, words),
        code_cue=_code(text, words),
        extraction_cue=_any(words, _EXTRACTION_WORDS),
        creative_cue=_any(words, _CREATIVE_WORDS),
        copy_source=copy,
        copy_kind=copy_kind(copy, view.instruction) if config.copy_kinds else ("copy" if copy else "new"),
    )


def classify(f: Features, config: ClassifierConfig) -> TaskClass:
    """One class per request; the order of the checks is the documented precedence."""
    if f.prompt_tokens >= config.long_prompt_tokens:
        return "long_context"
    if f.structured_output or f.json_cue or f.sql_cue:
        return "structured"
    if (f.temperature_given and f.temperature >= config.creative_temperature) or f.creative_cue:
        return "creative"
    if f.code_cue:
        return "code"
    if f.extraction_cue:
        return "extraction"
    return "chat"
