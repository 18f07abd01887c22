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
from dataclasses import dataclass

from gateway.protocol import RequestView

CLASSES = ("structured", "code", "extraction", "chat", "creative", "long_context")
TEMPERATURE_BUCKETS = ("greedy", "low", "high")

_JSON_CUE = re.compile(r"\bjson\b|\{\s*\"[\w ]+\"\s*:|\bschema\b|\byaml\b", re.IGNORECASE)
_SQL_CUE = re.compile(
    r"\bsql\b|\bselect\b[\s\S]{1,200}?\bfrom\b|\bcreate table\b|\binsert into\b|\bjoin\b[\s\S]{1,80}?\bon\b",
    re.IGNORECASE,
)
_CODE_CUE = re.compile(
    r"```|\bdef \w+\(|\bclass \w+[(:]|\bfunction\s+\w+\s*\(|\bimport \w+|#include\b|\breturn\b[^\n]*;|"
    r"\b(?:refactor|rewrite|implement|fix the bug|unit test|python|javascript|typescript|rust|golang)\b",
    re.IGNORECASE,
)
_EXTRACTION_CUE = re.compile(
    r"\b(?:extract|list all|list every|find all|which of the|quote|from the (?:following|above|text|document)|"
    r"according to the|answer using only)\b",
    re.IGNORECASE,
)
_CREATIVE_CUE = re.compile(
    r"\b(?:story|poem|haiku|sonnet|lyrics|imagine|fiction|creative|brainstorm|fairy tale|novel)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class ClassifierConfig:
    creative_temperature: float = 0.8
    long_prompt_tokens: int = 3000
    chars_per_token: float = 4.0
    default_max_tokens: int = 256


@dataclass(frozen=True, slots=True)
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
    text = view.cue_text
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
        json_cue=bool(_JSON_CUE.search(text)),
        sql_cue=bool(_SQL_CUE.search(text)),
        code_cue=bool(_CODE_CUE.search(text)),
        extraction_cue=bool(_EXTRACTION_CUE.search(text)),
        creative_cue=bool(_CREATIVE_CUE.search(text)),
    )


def classify(f: Features, config: ClassifierConfig) -> str:
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
