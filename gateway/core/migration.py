"""Pure rules of live migration: which running request may move, what it is resumed with, and how the client's
one stream is joined from the parts (plain data in, plain data out; `gateway/migrate.py` does the I/O).

A request moves from the server a shared GPU is leaving to the one it switches to: the leaving stream is closed
(vLLM aborts the request) and the request is resumed on the arriving server from the last byte relayed, as vLLM's
`ChatCompletionRequest` allows (`continue_final_message: true, add_generation_prompt: false`: the partial answer
is the final assistant message, left open) or, for completions, as prompt + text so far. `max_tokens` and
`max_completion_tokens` shrink by the tokens already generated. The client sees one stream: the first part's
`id`, `created` and `model` on every chunk, the resumed part's role chunk dropped, one `finish_reason`, and usage
with the original prompt counted once and the parts' completion tokens summed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

REMAINING_FLOOR = 0.1  # a request past its predicted end is taken to have this share of its prediction left
STRUCTURED_FORMATS = frozenset({"json_schema", "json_object", "structural_tag", "grammar", "regex"})
COMPLETIONS_DEFAULT_MAX_TOKENS = 16  # vLLM's `CompletionRequest.max_tokens` when a completion gives none
MAX_STOPS, MAX_STOP_CHARS = 16, 1024  # beyond these a request's stop strings are never checked at a seam: not moved
PENALTIES = ("frequency_penalty", "presence_penalty")  # vLLM counts them over generated tokens only


def not_movable(chat: bool, body: Mapping[str, Any]) -> str | None:
    """Why a request cannot resume faithfully from its text (a short stable token), or None when it can."""
    if body.get("n", 1) not in (1, None) or body.get("best_of") not in (None, 1):
        return "n"
    if body.get("echo"):
        return "echo"
    if body.get("use_beam_search"):
        return "n"
    logprobs = body.get("logprobs")  # completions' 0 asks for the sampled tokens' logprobs (and 0 == False)
    if (logprobs is not None and logprobs is not False) or body.get("top_logprobs") \
            or body.get("prompt_logprobs") is not None:
        return "logprobs"
    if body.get("tools") or body.get("tool_choice") not in (None, "none"):
        return "tools"
    fmt = body.get("response_format")
    kind = fmt.get("type") if isinstance(fmt, Mapping) else None  # not a string: unknown, so never moved (nor hashed)
    guided = any(key.startswith("guided_") and value is not None for key, value in body.items())
    if (isinstance(fmt, Mapping) and (not isinstance(kind, str) or kind in STRUCTURED_FORMATS)) or guided \
            or body.get("structured_outputs") is not None:
        return "structured"  # the grammar's state is not resumable from text
    if body.get("seed") is not None:
        return "seed"  # the resumed sampler would not draw what the first one would have
    if body.get("return_tokens_as_token_ids"):
        return "token_ids"
    if any(body.get(key) not in (None, 0) for key in PENALTIES):
        return "penalty"  # resumed, the partial answer is prompt: its repetitions would go unpenalised
    stops, least = stop_strings(body), body.get("min_tokens")
    if len(stops) > MAX_STOPS or sum(map(len, stops)) > MAX_STOP_CHARS \
            or (stops and isinstance(least, int) and least > 0):
        return "stop"  # checked at a seam by `SeamCut`, which does not count `min_tokens` (vLLM stops after them)
    if body.get("truncate_prompt_tokens") is not None \
            or (body.get("stream_options") is not None and not body.get("stream")):
        return "shape"  # the resumed prompt is truncated elsewhere; vLLM refuses the other with a 400 of its own
    if chat:
        messages = body.get("messages")
        if not isinstance(messages, list) or body.get("continue_final_message") \
                or body.get("add_generation_prompt") is False \
                or (messages and isinstance(messages[-1], Mapping) and messages[-1].get("role") == "assistant"):
            return "shape"  # a resume after an assistant turn would send two in a row (some templates refuse it)
    elif not isinstance(body.get("prompt"), str) or body.get("suffix") is not None:
        return "shape"
    return None


def remaining_s(expected_tokens: float, generated: int, tokens_per_step: float, step_s: float) -> float:
    """The predicted seconds a running request has left on its server: the tokens it is expected to produce beyond
    those it has (a request past its expected length: a tenth of that length), at the server's pace."""
    left = max(expected_tokens - generated, REMAINING_FLOOR * expected_tokens)
    return left / max(tokens_per_step, 1.0) * step_s


def moving_pays(stay_s: float, on_arriving_s: float, reprefill_s: float, stretch: float) -> bool:
    """Whether a request ends sooner moved than left to co-run: moved, it is prefilled again (`reprefill_s`) and
    runs its remaining tokens at the arriving server's pace for its class (`on_arriving_s`: a creative request at
    temperature 1 is slower on an n-gram server, ~1.05 tokens a step at a dearer step); left, its `stay_s` stretch
    by `stretch` (each of its steps also waits for one of the arriving server's: own_arriving(L) / own_leaving(n)
    at strict alternation). Seen on bursty: moved on the remaining-time rule alone, a chat and a creative request
    at high temperature ran 0.3-0.4 s longer on the n-gram server than they would have on the baseline."""
    return reprefill_s + on_arriving_s < stay_s * (1.0 + stretch)


def move_extra_s(stay_s: float, on_arriving_s: float, reprefill_s: float) -> float:
    """What a move costs the request itself against finishing alone where it is (no switch): its prefill again and
    its pace on the arriving server, less its remaining time where it is; never below 0 (a request that gains by
    moving is not counted as a gain of the switch)."""
    return max(reprefill_s + on_arriving_s - stay_s, 0.0)


def token_limit(chat: bool, body: Mapping[str, Any]) -> int | None:
    """The completion tokens vLLM grants `body` (None: up to the context): a chat's `max_completion_tokens` over
    its `max_tokens`; a completion's `max_tokens`, 16 when absent."""
    keys = ("max_completion_tokens", "max_tokens") if chat else ("max_tokens",)
    for key in keys:
        limit = body.get(key)
        if isinstance(limit, int) and not isinstance(limit, bool):
            return limit
    return None if chat or "max_tokens" in body else COMPLETIONS_DEFAULT_MAX_TOKENS


def resume_body(chat: bool, body: Mapping[str, Any], text: str, tokens: int) -> dict[str, Any] | None:
    """The request that continues `body` after `text` (`tokens` completion tokens); None when its token budget
    is spent (nothing left to resume). A chat with no text yet is sent again as it came (an empty final assistant
    message would be taken as a closed turn)."""
    out = dict(body)
    limit = token_limit(chat, body)
    if limit is not None:
        if limit - tokens < 1:
            return None
        for key in ("max_tokens", "max_completion_tokens"):
            if key in body or (key == "max_tokens" and not chat):
                out[key] = limit - tokens
    least = body.get("min_tokens")
    if isinstance(least, int) and not isinstance(least, bool):
        out["min_tokens"] = max(least - tokens, 0)
    if chat and text:  # without its trailing whitespace, which a template may trim anyway (Llama 3's does, and
        # transformers' `continue_final_message` then cuts the prompt before it): the model writes it again, and
        # the joiner drops what repeats (`StreamJoin.seam_ws`), whichever the template
        out["messages"] = [*body["messages"], {"role": "assistant", "content": text.rstrip()}]
        out["continue_final_message"] = True
        out["add_generation_prompt"] = False
    elif not chat:
        out["prompt"] = body["prompt"] + text
    out["stream"] = True
    out["stream_options"] = {"include_usage": True, "continuous_usage_stats": True}
    return out


def stop_strings(body: Mapping[str, Any]) -> tuple[str, ...]:
    stop = body.get("stop")
    if isinstance(stop, str):
        return (stop,) if stop else ()
    if isinstance(stop, list):
        return tuple(s for s in stop if isinstance(s, str) and s)
    return ()


@dataclass(slots=True)
class SeamCut:
    """Stop strings after a seam: the arriving server never saw the text before it as output, so a stop that
    starts there and ends in the continuation is found here, on the joined text. Continuation text that could
    still be the start of a stop is held back; where a stop completes, the continuation is cut (at the stop's
    start, or its end with `include_stop_str_in_output`; text relayed before the seam cannot be taken back)."""

    joined: str  # the text relayed before the seam (its tail is enough) ...
    stops: tuple[str, ...]
    include: bool = False
    emitted: int = -1  # ... and how much of `joined` has been relayed (set from `joined` at the start)
    seam: int = -1
    before_seam: int = 0  # of the stop string that ended the answer: the characters relayed before the seam

    def __post_init__(self) -> None:
        longest = max((len(s) for s in self.stops), default=1)
        self.joined = self.joined[-(longest - 1):] if longest > 1 else ""
        self.emitted = self.seam = len(self.joined)

    def feed(self, delta: str) -> tuple[str, str | None]:
        """The text to relay now, and the stop string that ended the answer (None: not stopped)."""
        start = len(self.joined)
        self.joined += delta
        hit: tuple[int, str] | None = None
        for s in self.stops:
            i = self.joined.find(s, max(self.seam - len(s) + 1, start - len(s) + 1, 0))
            if i >= 0 and (hit is None or i < hit[0]):
                hit = (i, s)
        if hit is not None:
            self.before_seam = max(self.seam - hit[0], 0)
            cut = max(hit[0] + len(hit[1]) if self.include else hit[0], self.emitted)
            out = self.joined[self.emitted:cut]
            self.emitted = cut
            return out, hit[1]
        held = _open_stop(self.joined, self.stops)
        upto = max(len(self.joined) - held, self.emitted)
        out = self.joined[self.emitted:upto]
        self.emitted = upto
        return out, None

    def flush(self) -> str:
        """The held text, when the answer ends without a stop."""
        out = self.joined[self.emitted:]
        self.emitted = len(self.joined)
        return out


def _open_stop(text: str, stops: tuple[str, ...]) -> int:
    """The length of the longest end of `text` that is a proper start of a stop string (0: none)."""
    best = 0
    for s in stops:
        for k in range(min(len(s) - 1, len(text)), best, -1):
            if text.endswith(s[:k]):
                best = k
                break
    return best


@dataclass(slots=True)
class StreamJoin:
    """The client's one stream, joined from the parts of a request that moved (SSE event objects in and out)."""

    chat: bool
    client_usage: bool  # the client asked for the final usage event
    client_continuous: bool  # ... and for usage on every chunk
    stops: tuple[str, ...] = ()
    include_stop: bool = False
    ident: dict[str, Any] | None = None  # the first part's id, created, model (and object)
    text: str = ""  # the answer's text relayed so far
    part_tokens: int = 0  # ... and of the current part, from its continuous usage
    prompt_tokens: int | None = None  # the original prompt's, from the first part
    part: int = 0
    finished: bool = False  # a finish_reason has been relayed ...
    finish_reason: str | None = None  # ... this one, with this stop_reason
    stop_reason: Any = None
    stopped: str | None = None  # the stop string the joiner cut the answer at
    usage_sent: bool = False
    content_events: int = 0
    steps: int = 0  # engine steps, counted as `SseTap.engine_steps` counts them (a role-only chunk is none)
    cut: SeamCut | None = field(default=None)
    part_counts: list[int] = field(default_factory=list)  # completion tokens of each part before the current one
    reasoning: str = ""  # a reasoning model's reasoning relayed so far (vLLM's `reasoning_content` or `reasoning`)
    reasoning_key: str = "reasoning_content"
    seam_ws: str = ""  # a chat's whitespace before the last seam, which the resumed request was not given
    repeated_tokens: int = 0  # ... and the tokens of the events that only wrote it again (not the client's)

    @property
    def tokens(self) -> int:
        """Completion tokens of the parts before the current one."""
        return sum(self.part_counts)

    @property
    def completion_tokens(self) -> int:
        return self.tokens + self.part_tokens - self.repeated_tokens

    @property
    def resumable(self) -> bool:
        """Whether the answer so far can be resumed from: not finished, no reasoning (a resume carries the answer's
        text only), and not whitespace alone (a chat template trims it: the resumed turn would start afresh)."""
        return not self.finished and not self.reasoning and (not self.chat or not self.text or bool(self.text.strip()))

    def seam(self) -> None:
        """The current part ends here; the next events are the resumed request's."""
        self.part_counts.append(self.part_tokens)
        self.part_tokens = 0
        self.part += 1
        self.cut = SeamCut(self.text, self.stops, self.include_stop) if self.stops else None
        if self.chat:  # resumed without it (`resume_body`): the continuation's first whitespace repeats it
            self.seam_ws = self.text[len(self.text.rstrip()):]

    def usage(self) -> dict[str, int]:
        prompt = self.prompt_tokens or 0
        return {"prompt_tokens": prompt, "total_tokens": prompt + self.completion_tokens,
                "completion_tokens": self.completion_tokens}

    def event(self, obj: dict[str, Any]) -> list[dict[str, Any]]:
        """The events to relay for one upstream event (none, while held back or after the joiner cut)."""
        if self.stopped is not None:
            return []
        if self.ident is None:
            self.ident = {k: obj[k] for k in ("id", "created", "model") if k in obj}
        else:
            obj.update(self.ident)
        usage, before = obj.get("usage"), self.part_tokens
        if isinstance(usage, dict):
            self._read_usage(usage)
        choices = obj.get("choices")
        if choices == []:  # the final usage-only event
            if not self.client_usage or self.usage_sent:
                return []
            self.usage_sent = True
            obj["usage"] = self.usage()
            return [obj]
        if isinstance(usage, dict) or "usage" in obj:
            if self.client_continuous:
                obj["usage"] = self.usage()
            else:
                del obj["usage"]
        if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
            return [obj]
        return self._choice(obj, choices[0], max(self.part_tokens - before, 0))

    def _read_usage(self, usage: dict[str, Any]) -> None:
        tokens, prompt = usage.get("completion_tokens"), usage.get("prompt_tokens")
        if isinstance(tokens, int):
            self.part_tokens = tokens
        if self.part == 0 and isinstance(prompt, int):
            self.prompt_tokens = prompt
        elif self.prompt_tokens is None and isinstance(prompt, int):  # no usage from the first part: its text
            self.prompt_tokens = max(prompt - self.tokens, 0)

    def _choice(self, obj: dict[str, Any], choice: dict[str, Any], tokens: int) -> list[dict[str, Any]]:
        """`tokens`: the event's own (the change of its continuous usage)."""
        holder: dict[str, Any] = choice.get("delta", {}) if self.chat else choice
        if not isinstance(holder, dict):
            return [obj]
        key = "content" if self.chat else "text"
        content = holder.get(key)
        finish = choice.get("finish_reason")
        if self.chat:
            self._read_reasoning(holder)
        if content or finish is not None or "role" not in holder:  # a step's tokens (an EOS alone: no text)
            self.steps += 1
        if self.part and self.chat and "role" in holder:
            del holder["role"]
            if not content and finish is None and len(holder) <= 1:
                return []  # the resumed request's role chunk: the client had it from the first part
        if self.seam_ws and isinstance(content, str) and content:
            holder[key] = content = self._drop_repeated_ws(content)
            if not content:  # an event that only repeated it: its tokens are not the answer's
                self.repeated_tokens += tokens
                if finish is None:
                    return []
        if self.cut is not None and isinstance(content, str):
            emit, stop = self.cut.feed(content)
            if stop is None and finish is not None:
                emit += self.cut.flush()
            if stop is not None:
                self.stopped = stop
                choice["finish_reason"] = finish = "stop"
                if "stop_reason" in choice:
                    choice["stop_reason"] = stop
            holder[key] = content = emit
            if not emit and finish is None:
                return []
        elif self.cut is not None and finish is not None:
            holder[key] = content = (content or "") + self.cut.flush()
        if isinstance(content, str):
            self.text += content
            if content:
                self.content_events += 1
        if finish is not None:
            self.finished, self.finish_reason = True, finish
            self.stop_reason = self.stopped if self.stopped is not None else choice.get("stop_reason")
        return [obj]

    def _drop_repeated_ws(self, content: str) -> str:
        """The continuation less the whitespace the client already has from before the seam (its common start)."""
        ws, n = self.seam_ws, 0
        while n < len(content) and n < len(ws) and content[n] == ws[n]:
            n += 1
        self.seam_ws = ws[n:] if n == len(content) else ""  # all of it repeated: more may come in the next event
        return content[n:]

    def _read_reasoning(self, delta: dict[str, Any]) -> None:
        for key in ("reasoning_content", "reasoning"):
            value = delta.get(key)
            if isinstance(value, str) and value:
                self.reasoning += value
                self.reasoning_key = key
                return

    def closing(self) -> list[dict[str, Any]]:
        """After the joiner cut the answer: the usage event the client asked for (the upstream is closed)."""
        if not self.client_usage or self.usage_sent or self.ident is None:
            return []
        self.usage_sent = True
        return [{**self.ident, "object": "chat.completion.chunk" if self.chat else "text_completion",
                 "choices": [], "usage": self.usage()}]


def joined_answer(join: StreamJoin) -> dict[str, Any]:
    """A non-streamed answer from its joined parts, in vLLM's shape. A stop string that straddles a seam is cut
    from its start here (nothing had reached the client), unless `include_stop_str_in_output`."""
    text = join.text
    if join.stopped is not None and join.cut is not None and not join.include_stop and join.cut.before_seam:
        text = text[:len(text) - join.cut.before_seam]
    ident = join.ident or {}
    if join.chat:
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None, "annotations": None,
                                   "audio": None, "function_call": None, "tool_calls": [], "reasoning_content": None}
        if join.reasoning:
            message[join.reasoning_key] = join.reasoning
        choice: dict[str, Any] = {"index": 0, "message": message, "logprobs": None,
                                  "finish_reason": join.finish_reason, "stop_reason": join.stop_reason}
    else:
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": join.finish_reason,
                  "stop_reason": join.stop_reason, "prompt_logprobs": None}
    return {"id": ident.get("id"), "object": "chat.completion" if join.chat else "text_completion",
            "created": ident.get("created"), "model": ident.get("model"), "choices": [choice], "usage": join.usage(),
            "prompt_logprobs": None, "kv_transfer_params": None}
