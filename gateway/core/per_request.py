"""Pure per-request refinements of the learner's per-(class, bucket) estimates, from what the request says: its
output length (`outlen`) and its tokens per speculative step by prompt length and prompt family
(`acceptance_cells`), the latter corrected by what such estimates delivered where they were acted on
(`calibration`). The learner owns one and feeds it every observation; the decision path asks it. Not
persisted: re-learned from the first requests."""

from __future__ import annotations

from gateway.core.acceptance_cells import AcceptanceCells, decode_tokens_per_step
from gateway.core.calibration import Calibration
from gateway.core.outlen import OutputLengths


class PerRequest:
    def __init__(self, prior_output_tokens: float, forgetting: float, max_tokens_per_step: float,
                 by_kind: bool = False) -> None:
        self.lengths = OutputLengths(prior_output_tokens, forgetting)
        self.acceptance = AcceptanceCells(forgetting, by_kind)
        self.calibration = Calibration(forgetting)
        self.max_tokens_per_step = max_tokens_per_step

    def output(self, task_class: str, bucket: str, max_tokens: int, max_tokens_given: bool, prompt_tokens: int,
               structured: bool) -> tuple[float, float]:
        """Expected completion tokens and the typical log error of that prediction; never above `max_tokens`."""
        given = max_tokens if max_tokens_given else None
        out = self.lengths.predict(task_class, bucket, given, prompt_tokens, structured)
        return min(out, float(max_tokens)), self.lengths.error(task_class, bucket, given, prompt_tokens, structured)

    def tokens_per_step(self, posterior: tuple[float, float], task_class: str, bucket: str, prompt_tokens: int,
                        family: int | None, temperature: float = 0.0, copy_kind: str = "new",
                        output_tokens: float | None = None) -> tuple[float, float, str]:
        """The (class, bucket) posterior's mean refined by what such prompts (and answers of the length
        `output_tokens`, where given) delivered; the same sd; the cells it came from (`AcceptanceCells.explained`)."""
        mean, sd = posterior
        est, source = self.acceptance.explained(mean, task_class, bucket, prompt_tokens, family, temperature,
                                                copy_kind, output_tokens)
        return min(max(est, 1.0), self.max_tokens_per_step), sd, source

    def for_request(self, posterior: tuple[float, float], task_class: str, bucket: str, max_tokens: int,
                    max_tokens_given: bool, prompt_tokens: int, structured: bool, family: int | None,
                    temperature: float = 0.0, copy_kind: str = "new") -> tuple[float, float, float, str, float]:
        """Output tokens, tokens per step (calibrated), its sd, its source and the raw tokens per step (what the cells
        said: the calibration learns against it) for one request, from its (class, bucket)'s tokens-per-step
        `posterior` (the learner's) and what the request says (`copy_kind`)."""
        output = self.output(task_class, bucket, max_tokens, max_tokens_given, prompt_tokens, structured)[0]
        raw, sd, source = self.tokens_per_step(posterior, task_class, bucket, prompt_tokens, family, temperature,
                                               copy_kind, output)
        tps = self.calibration.calibrated(task_class, raw, self.max_tokens_per_step)
        if tps != raw:
            source += f"/{raw / tps:.2f}"
        return output, tps, sd, source, raw

    def observe_output(self, task_class: str, bucket: str, max_tokens: int | None, prompt_tokens: int,
                       structured: bool, completion_tokens: int) -> None:
        self.lengths.observe(task_class, bucket, max_tokens, prompt_tokens, structured, completion_tokens)

    def observe_acceptance(self, task_class: str, bucket: str, prompt_tokens: int, tokens: int, steps: int,
                           estimate: float, family: int | None, temperature: float = 0.0,
                           copy_kind: str = "new", scale: float = 1.0, predicted: float | None = None) -> None:
        """A streamed speculative response: `tokens` in `steps` where its (class, bucket) said `estimate` tokens
        per decode step (a shadow read: at `scale` of a response's weight); `predicted`: the raw per-request estimate
        it was routed on, if it was."""
        tps, decode_steps = decode_tokens_per_step(tokens, steps, round(self.max_tokens_per_step) - 1)
        if predicted is not None:
            self.calibration.observe(task_class, tps * decode_steps, decode_steps, predicted)
        self.acceptance.observe(task_class, bucket, prompt_tokens, tps, estimate, decode_steps * scale, family,
                                temperature, copy_kind, tokens)

    def state(self) -> dict[str, int]:
        return {"output_length_cells": self.lengths.cells(), "acceptance_cells": self.acceptance.cells()}
