"""Shadow prompt lookup at the edge: which responses are replayed, their text, and where the reads go.

`core.shadow_lookup` replays what an n-gram speculative server would have accepted on a response's text. Here: a
response of a non-speculative server is replayed (rate-limited, `SPECGATE_SHADOW_RATE_PER_S`) and its calibrated read
is the learner's acceptance evidence for the speculative server (`Learner.observe_shadow`, at
`SPECGATE_SHADOW_WEIGHT` of a measured response); a share of the speculative server's own responses
(`SPECGATE_SHADOW_CALIBRATION_SHARE`) is replayed to calibrate (`core.shadow_calibration`). The text is captured
by the SSE tap (`streaming.SseTap.capture`) or is the whole answer; the replay runs in `Accounting.record`, after
the response was handed back, off its latency. Only for n-gram speculative servers (`SPECGATE_SPECULATIVE_METHOD`).
"""

from __future__ import annotations

import math
import time
from typing import Any

import orjson

from gateway.core.costmodel import Role
from gateway.core.learner import Learner
from gateway.core.shadow_calibration import ShadowCalibration
from gateway.core.shadow_lookup import LookupConfig, ShadowRead, replay_text
from gateway.settings import Settings
from gateway.streaming import event_data

CAPTURE_BYTES = 1 << 20  # of a stream's bytes kept for the replay (its first MiB: the text's first ~1000 tokens)
CHARGE_TOKENS = 4096  # a replay counts against the rate once per this many prompt tokens it searches


def replay_charge(prompt_tokens: int, max_prompt_tokens: int) -> int:
    """How many replays one of a `prompt_tokens` prompt counts as: its work grows with the prompt it searches."""
    return max(math.ceil(min(prompt_tokens, max_prompt_tokens) / CHARGE_TOKENS), 1)


class Shadow:
    def __init__(self, settings: Settings, learner: Learner) -> None:
        self.settings, self.learner = settings, learner
        self.cfg = LookupConfig(k=settings.num_speculative_tokens, nmin=settings.shadow_prompt_lookup_min,
                                nmax=settings.shadow_prompt_lookup_max,
                                max_prompt_tokens=settings.shadow_max_prompt_tokens)
        self.calibration = ShadowCalibration(settings.shadow_default_ratio, settings.prior_weight,
                                             settings.forgetting, settings.shadow_default_ratio_sampled)
        self._tokens = self._cap = max(settings.shadow_rate_per_s, 1.0)  # a token bucket of replays a second
        self._at = time.monotonic()
        self._speculative_seen = 0
        self.replays = 0
        self.cost_s = 0.0  # total CPU seconds the replays took
        self.cost_max_s = 0.0

    def capture(self, role: Role, now: float | None = None) -> bytearray | None:
        """A buffer for the response's bytes when it is to be replayed, else None."""
        if role == "speculative":
            self._speculative_seen += 1
            share, seen = self.settings.shadow_calibration_share, self._speculative_seen
            if int(seen * share) == int((seen - 1) * share):  # every 1/share-th response
                return None
        now = time.monotonic() if now is None else now
        self._tokens = min(self._tokens + max(now - self._at, 0.0) * self.settings.shadow_rate_per_s, self._cap)
        self._at = now
        if self._tokens < 1.0:
            return None
        self._tokens -= 1.0
        return bytearray()

    def observe(self, role: Role, payload: bytes, chat: bool, captured: bytes, stream: bool, task_class: str,
                bucket: str, steps: int | None, tokens: int, prompt_tokens: int, family: int | None,
                temperature: float) -> float | None:
        """Replay one response; its shadow tokens per step (None: nothing to replay)."""
        t0 = time.perf_counter()
        prompt = prompt_text(payload, chat)
        text = stream_text(captured, chat) if stream else answer_text(captured, chat)
        if prompt is None or not text:
            return None
        read: ShadowRead = replay_text(prompt, text, self.cfg)
        self._tokens -= replay_charge(prompt_tokens, self.cfg.max_prompt_tokens) - 1.0  # capture took one
        if read.steps <= 1:
            return None
        shadow = read.tokens_per_step
        if role == "speculative":
            if steps:
                self.calibration.observe(bucket, tokens / steps, shadow, steps)
        else:
            calibrated = self.calibration.calibrated(bucket, shadow)
            self.calibration.record(task_class, bucket, shadow, calibrated)
            self.learner.observe_shadow(task_class, bucket, prompt_tokens, calibrated, read.steps,
                                        self.settings.shadow_weight, family, temperature)
        cost = time.perf_counter() - t0
        self.replays += 1
        self.cost_s += cost
        self.cost_max_s = max(self.cost_max_s, cost)
        return shadow

    def state(self) -> dict[str, Any]:
        """Shadow against measured per class, the calibration, and what the replays cost."""
        state = self.calibration.state()
        measured = self.learner.class_estimates()
        classes: Any = state["classes"]
        for key, est in measured.items():
            row = classes.setdefault(f"{key[0]}/{key[1]}", {})
            row["learned_tokens_per_step"] = round(est.tokens_per_step, 4)
            row["speculative_observations"] = est.speculative_observations
        mean_us = self.cost_s / self.replays * 1e6 if self.replays else 0.0
        return {**state, "replays": self.replays, "cost_us_mean": round(mean_us, 1),
                "cost_us_max": round(self.cost_max_s * 1e6, 1)}


def prompt_text(payload: bytes, chat: bool) -> str | None:
    """The prompt as text: a completion's prompt, or a chat's message contents one after the other."""
    try:
        body = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(body, dict):
        return None
    if not chat:
        prompt = body.get("prompt")
        return prompt if isinstance(prompt, str) else None
    parts = []
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):  # content parts: their text
            parts.extend(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return "\n".join(parts)


def _choice_text(obj: Any, chat: bool, whole: bool) -> str:
    choices = obj.get("choices") if isinstance(obj, dict) else None
    if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
        return ""
    holder = choices[0].get("message" if whole else "delta") if chat else choices[0]
    text = holder.get("content" if chat else "text") if isinstance(holder, dict) else None
    return text if isinstance(text, str) else ""


def stream_text(captured: bytes, chat: bool) -> str:
    """The generated text of a captured SSE stream (its whole events)."""
    parts = []
    for event in captured.split(b"\n\n"):
        data = event_data(event)
        if not data or data == b"[DONE]":
            continue
        try:
            parts.append(_choice_text(orjson.loads(data), chat, whole=False))
        except orjson.JSONDecodeError:
            continue
    return "".join(parts)


def answer_text(captured: bytes, chat: bool) -> str:
    try:
        return _choice_text(orjson.loads(captured), chat, whole=True)
    except orjson.JSONDecodeError:
        return ""
