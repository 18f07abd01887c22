"""vLLM's OpenAI wire format: request validation, error bodies, response and chunk objects."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["chat", "completion"]


class ApiError(Exception):
    """An error answered as vLLM does: {"error": {"message", "type", "param", "code"}}, code = HTTP status."""

    def __init__(self, message: str, status: int = 400, err_type: str = "BadRequestError", param: str | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.err_type = err_type
        self.param = param

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.err_type, "param": self.param, "code": self.status}}


@dataclass(frozen=True, slots=True)
class GenRequest:
    kind: Kind
    model: str
    prompt: str
    prompt_token_count: int | None  # given as token ids (completions only)
    max_tokens: int | None
    n: int
    temperature: float
    ignore_eos: bool
    stream: bool
    include_usage: bool
    continuous_usage: bool
    partial: str | None = None  # chat, `continue_final_message`: the open final assistant message it continues


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    raise ApiError("Invalid message content.", param="messages")


def chat_prompt(messages: list[Any], add_generation_prompt: bool = True, continue_final: bool = False) -> str:
    """The text the target sees for a chat request (a simple chat template). `continue_final`: the final message
    is left open (no end of turn, no generation prompt), as vLLM's `continue_final_message` does."""
    parts = []
    for m in messages:
        if not isinstance(m, dict) or "role" not in m:
            raise ApiError("Each message must be an object with a 'role'.", param="messages")
        parts.append(f"{m['role']}: {_content_text(m.get('content'))}\n\n")
    if continue_final:
        parts[-1] = parts[-1][:-2]
    elif add_generation_prompt:
        parts.append("assistant:")
    return "".join(parts)


def prompt_of(body: dict[str, Any]) -> str:
    """The prompt text of a request body, exactly as the emulated server sees it (for offline use)."""
    if "messages" in body:
        return chat_prompt(body["messages"])
    p = body.get("prompt", "")
    if isinstance(p, list):
        if p and all(isinstance(x, int) for x in p):
            return " ".join(str(x) for x in p)
        return "\n".join(str(x) for x in p)
    return str(p)


def _int_field(body: dict[str, Any], name: str) -> int | None:
    v = body.get(name)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise ApiError(f"{name} must be an integer, got {v!r}.", param=name)
    return v


def parse_request(body: Any, kind: Kind, served_model: str) -> GenRequest:
    if not isinstance(body, dict):
        raise ApiError("The request body must be a JSON object.")
    model = body.get("model") or served_model
    if model != served_model:
        raise ApiError(f"The model `{model}` does not exist.", 404, "NotFoundError", "model")
    count: int | None = None
    partial: str | None = None
    if kind == "chat":
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ApiError("'messages' must be a non-empty list.", param="messages")
        continue_final = bool(body.get("continue_final_message", False))
        add_generation_prompt = bool(body.get("add_generation_prompt", True))
        if continue_final and add_generation_prompt:
            raise ApiError("Cannot set both `continue_final_message` and `add_generation_prompt` to True.")
        prompt = chat_prompt(messages, add_generation_prompt, continue_final)
        last = messages[-1]
        if continue_final and isinstance(last, dict) and last.get("role") == "assistant":
            partial = _content_text(last.get("content"))
    else:
        raw = body.get("prompt")
        if raw is None or raw == "" or raw == []:
            raise ApiError("Prompt cannot be empty.", param="prompt")
        if not isinstance(raw, str | list):
            raise ApiError("'prompt' must be a string or a list.", param="prompt")
        if isinstance(raw, list) and raw and all(isinstance(x, int) for x in raw):
            count = len(raw)
        prompt = prompt_of(body)
    max_tokens = _int_field(body, "max_completion_tokens") if kind == "chat" else None
    if max_tokens is None:
        max_tokens = _int_field(body, "max_tokens")
    if max_tokens is not None and max_tokens < 1:
        raise ApiError(f"max_tokens must be at least 1, got {max_tokens}.", param="max_tokens")
    n_field = _int_field(body, "n")
    n = 1 if n_field is None else n_field
    if n < 1:
        raise ApiError(f"n must be at least 1, got {n}.", param="n")
    temperature = body.get("temperature")
    temperature = 1.0 if temperature is None else temperature
    if isinstance(temperature, bool) or not isinstance(temperature, int | float):
        raise ApiError(f"temperature must be a number, got {temperature!r}.", param="temperature")
    if temperature < 0:
        raise ApiError(f"temperature must be non-negative, got {temperature}.", param="temperature")
    stream = bool(body.get("stream", False))
    options = body.get("stream_options")
    if options is not None and not stream:
        raise ApiError("Stream options can only be defined when `stream=True`.", param="stream_options")
    if options is not None and not isinstance(options, dict):
        raise ApiError("stream_options must be an object.", param="stream_options")
    include_usage = options is not None and options.get("include_usage", True) is not False
    continuous = include_usage and bool(options and options.get("continuous_usage_stats", False))
    return GenRequest(
        kind=kind, model=model, prompt=prompt, prompt_token_count=count, max_tokens=max_tokens, n=n,
        temperature=float(temperature), ignore_eos=bool(body.get("ignore_eos", False)), stream=stream,
        include_usage=include_usage, continuous_usage=continuous, partial=partial,
    )


def new_id(kind: Kind) -> str:
    return ("chatcmpl-" if kind == "chat" else "cmpl-") + uuid.uuid4().hex


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "completion_tokens": completion_tokens,
    }


def chunk(kind: Kind, rid: str, created: int, model: str, choices: list[dict[str, Any]],
          use: dict[str, int] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "id": rid,
        "object": "chat.completion.chunk" if kind == "chat" else "text_completion",
        "created": created,
        "model": model,
        "choices": choices,
    }
    if use is not None:
        obj["usage"] = use
    return obj


def stream_choice(kind: Kind, index: int, text: str, finish_reason: str | None, role: bool = False) -> dict[str, Any]:
    if kind == "chat":
        delta: dict[str, Any] = {"role": "assistant", "content": text} if role else {"content": text}
        return {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
    return {"index": index, "text": text, "logprobs": None, "finish_reason": finish_reason, "stop_reason": None}


def full_response(kind: Kind, rid: str, model: str, texts: list[str], reasons: list[str],
                  use: dict[str, int]) -> dict[str, Any]:
    choices: list[dict[str, Any]] = []
    for i, (text, reason) in enumerate(zip(texts, reasons, strict=True)):
        if kind == "chat":
            message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None, "annotations": None,
                                       "audio": None, "function_call": None, "tool_calls": [],
                                       "reasoning_content": None}
            choices.append({"index": i, "message": message, "logprobs": None, "finish_reason": reason,
                            "stop_reason": None})
        else:
            choices.append({"index": i, "text": text, "logprobs": None, "finish_reason": reason,
                            "stop_reason": None, "prompt_logprobs": None})
    return {
        "id": rid,
        "object": "chat.completion" if kind == "chat" else "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
        "usage": use,
        "prompt_logprobs": None,
        "kv_transfer_params": None,
    }
