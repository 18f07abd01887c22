"""The OpenAI wire format, as far as the gateway needs it: one parse per request, error bodies.

`parse_request` validates only the fields the gateway reads and keeps the parsed body so it can be
forwarded unchanged (the original bytes are forwarded when nothing must change).
"""

from __future__ import annotations

from typing import Any, ClassVar

import orjson

from gateway.core.instruction import instruction_text
from gateway.core.prefix_index import prompt_blocks
from gateway.core.records import record

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"


class GatewayError(Exception):
    """An error the gateway answers itself, mapped once to an OpenAI-shaped body."""

    status: ClassVar[int] = 500
    type: ClassVar[str] = "server_error"
    default_code: ClassVar[str | None] = None

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code if code is not None else self.default_code

    def body(self) -> bytes:
        return error_body(self.message, self.type, self.param, self.code)


class InvalidRequest(GatewayError):
    status: ClassVar[int] = 400
    type: ClassVar[str] = "invalid_request_error"


class RequestTimeout(GatewayError):
    status: ClassVar[int] = 408
    type: ClassVar[str] = "invalid_request_error"
    default_code: ClassVar[str | None] = "request_timeout"


class BodyTooLarge(GatewayError):
    status: ClassVar[int] = 413
    type: ClassVar[str] = "invalid_request_error"
    default_code: ClassVar[str | None] = "request_too_large"


class Unauthorized(GatewayError):
    status: ClassVar[int] = 401
    type: ClassVar[str] = "authentication_error"
    default_code: ClassVar[str | None] = "invalid_api_key"


class NotFound(GatewayError):
    status: ClassVar[int] = 404
    type: ClassVar[str] = "invalid_request_error"
    default_code: ClassVar[str | None] = "not_found"


class NoBackendAvailable(GatewayError):
    status: ClassVar[int] = 503
    type: ClassVar[str] = "server_error"
    default_code: ClassVar[str | None] = "no_healthy_backend"


class Draining(GatewayError):
    status: ClassVar[int] = 503
    type: ClassVar[str] = "server_error"
    default_code: ClassVar[str | None] = "shutting_down"


class UpstreamUnavailable(GatewayError):
    status: ClassVar[int] = 502
    type: ClassVar[str] = "server_error"
    default_code: ClassVar[str | None] = "upstream_unavailable"


class UpstreamTimeout(GatewayError):
    status: ClassVar[int] = 504
    type: ClassVar[str] = "server_error"
    default_code: ClassVar[str | None] = "upstream_timeout"


class UpstreamTooLarge(GatewayError):
    status: ClassVar[int] = 502
    type: ClassVar[str] = "server_error"
    default_code: ClassVar[str | None] = "upstream_response_too_large"


def error_body(message: str, type_: str, param: str | None = None, code: str | int | None = None) -> bytes:
    return orjson.dumps({"error": {"message": message, "type": type_, "param": param, "code": code}})


@record
class RequestView:
    """What routing needs to know about a request; built once, no I/O."""

    endpoint: str
    model: str
    stream: bool
    n: int
    temperature: float
    temperature_given: bool
    top_p: float
    max_tokens: int | None
    include_usage: bool
    prompt_chars: int
    cue_text: str
    response_format: str | None
    has_tools: bool
    has_structured_fields: bool
    # prefix-cache routing (`gateway.core.prefix_index`): the prompt's text-block hashes, the client's `user`
    prefix_blocks: tuple[int, ...] = ()
    user: str | None = None
    instruction: str = ""  # what the last user message asks, outside what it pastes (`core.instruction`)


STRUCTURED_FIELDS = (
    "guided_json", "guided_regex", "guided_choice", "guided_grammar", "structured_outputs", "json_schema",
)
_CUE_HEAD = 2000
_CUE_TAIL = 2000


def parse_json_object(raw: bytes) -> dict[str, Any]:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(f"Request body is not valid JSON: {exc}", code="invalid_json") from None
    if not isinstance(body, dict):
        raise InvalidRequest("Request body must be a JSON object.", code="invalid_body")
    return body


def _number(body: dict[str, Any], name: str, default: float, lo: float, hi: float) -> float:
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidRequest(f"'{name}' must be a number.", param=name, code="invalid_type")
    if not lo <= value <= hi:
        raise InvalidRequest(f"'{name}' must be between {lo} and {hi}.", param=name, code="invalid_value")
    return float(value)


def _optional_int(body: dict[str, Any], name: str, lo: int) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequest(f"'{name}' must be an integer.", param=name, code="invalid_type")
    if value < lo:
        raise InvalidRequest(f"'{name}' must be at least {lo}.", param=name, code="invalid_value")
    return value


def _clip(text: str) -> str:
    if len(text) <= _CUE_HEAD + _CUE_TAIL:
        return text
    return text[:_CUE_HEAD] + "\n" + text[-_CUE_TAIL:]


def _message_text(content: Any, param: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    raise InvalidRequest(f"'{param}' must be a string or a list of content parts.", param=param,
                         code="invalid_type")


def _chat_prompt(body: dict[str, Any]) -> tuple[int, str, list[str], str]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest("'messages' must be a non-empty array.", param="messages", code="invalid_type")
    chars = 0
    system, last_user = "", ""
    parts = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise InvalidRequest(f"'messages[{i}]' must be an object.", param=f"messages[{i}]",
                                 code="invalid_type")
        text = _message_text(message.get("content"), f"messages[{i}].content")
        chars += len(text) + 8
        role = message.get("role")
        parts.append(f"{role}:{text}")
        if role == "system":
            system = text
        elif role == "user":
            last_user = text
    return chars, _clip(system + "\n" + last_user), parts, instruction_text(last_user)


def _completion_prompt(body: dict[str, Any]) -> tuple[int, str]:
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return len(prompt), _clip(prompt)
    if isinstance(prompt, list) and prompt:
        if all(isinstance(p, str) for p in prompt):
            return sum(len(p) for p in prompt), _clip(prompt[0])
        if all(isinstance(p, int) and not isinstance(p, bool) for p in prompt):
            return 4 * len(prompt), ""  # token ids: ~4 characters a token
        if all(isinstance(p, list) for p in prompt):
            return 4 * sum(len(p) for p in prompt), ""
    raise InvalidRequest("'prompt' must be a string, an array of strings or an array of token ids.",
                         param="prompt", code="invalid_type")


def request_view(endpoint: str, body: dict[str, Any]) -> RequestView:
    """Validate the fields the gateway reads and build the view. Raises `InvalidRequest`."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise InvalidRequest("'model' is required and must be a string.", param="model", code="missing_model")
    stream = body.get("stream", False)
    if stream is not None and not isinstance(stream, bool):
        raise InvalidRequest("'stream' must be a boolean.", param="stream", code="invalid_type")
    n = _optional_int(body, "n", 1) or 1
    n = max(n, _optional_int(body, "best_of", 1) or 1)  # best_of and beam search generate several sequences
    if body.get("use_beam_search") is True:
        n = max(n, 2)
    temperature = _number(body, "temperature", 1.0, 0.0, 2.0)
    top_p = _number(body, "top_p", 1.0, 0.0, 1.0)
    max_tokens = _optional_int(body, "max_tokens", 1)
    if endpoint == CHAT:
        max_completion = _optional_int(body, "max_completion_tokens", 1)
        max_tokens = max_completion if max_completion is not None else max_tokens
        prompt_chars, cue_text, parts, instruction = _chat_prompt(body)
    else:
        prompt_chars, cue_text = _completion_prompt(body)
        prompt = body.get("prompt")
        parts = [prompt] if isinstance(prompt, str) else []
        instruction = instruction_text(prompt) if isinstance(prompt, str) else ""
    stream_options = body.get("stream_options")
    # vLLM's `StreamOptions.include_usage` defaults to true once `stream_options` is given
    include_usage = isinstance(stream_options, dict) and bool(stream_options.get("include_usage", True))
    response_format = body.get("response_format")
    rf_type = response_format.get("type") if isinstance(response_format, dict) else None
    extra = body.get("extra_body")
    has_structured = any(k in body for k in STRUCTURED_FIELDS) or (
        isinstance(extra, dict) and any(k in extra for k in STRUCTURED_FIELDS)
    )
    return RequestView(
        endpoint=endpoint,
        model=model,
        stream=bool(stream),
        n=n,
        temperature=temperature,
        temperature_given=body.get("temperature") is not None,
        top_p=top_p,
        max_tokens=max_tokens,
        include_usage=include_usage,
        prompt_chars=prompt_chars,
        cue_text=cue_text,
        response_format=rf_type if isinstance(rf_type, str) else None,
        has_tools=bool(body.get("tools")) and body.get("tool_choice") != "none",
        has_structured_fields=has_structured,
        prefix_blocks=prompt_blocks(parts),
        user=user if isinstance(user := body.get("user"), str) and user else None,
        instruction=instruction,
    )


def prepare(endpoint: str, raw: bytes) -> tuple[RequestView, bytes | None]:
    """Parse and validate a completion request; also the body to send upstream when it must change
    (a stream whose client did not ask for usage gets `include_usage`, so the gateway can learn).
    Pure and picklable both ways: large bodies run it in a helper process."""
    body = parse_json_object(raw)
    view = request_view(endpoint, body)
    if not (view.stream and not view.include_usage):
        return view, None
    options = body.get("stream_options")
    # usage on every chunk only with include_usage, as vLLM reads them: the gateway asks for the final one only
    body["stream_options"] = {**(options if isinstance(options, dict) else {}), "include_usage": True,
                              "continuous_usage_stats": False}
    return view, orjson.dumps(body)
