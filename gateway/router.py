"""Glue between the pure core and live state: builds a `PolicyInput` from the pool and the learner."""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from pathlib import Path

from gateway.backends import Backend, BackendPool
from gateway.classify import ClassifierConfig, Features, classify, features, temperature_bucket
from gateway.costmodel import Load, StepModel
from gateway.learner import Learner, LearnerConfig
from gateway.policy import AdaptiveConfig, Decision, Estimates, PolicyInput, RulesConfig, decide
from gateway.protocol import RequestView
from gateway.settings import Settings


@dataclass(frozen=True, slots=True)
class Oracle:
    tokens_per_step: float
    output_tokens: float


@dataclass(frozen=True, slots=True)
class Routed:
    decision: Decision
    features: Features
    cls: str
    bucket: str


def learner_config(s: Settings) -> LearnerConfig:
    return LearnerConfig(
        forgetting=s.forgetting,
        prior_weight=s.prior_weight,
        prior_tokens_per_step=s.prior_tokens_per_step,
        prior_output_tokens=float(s.default_max_tokens),
        num_speculative_tokens=s.num_speculative_tokens,
        prior_prefill_s_per_token=s.prior_prefill_s_per_token,
        prior_interference={"baseline": s.prior_interference_baseline,
                            "speculative": s.prior_interference_speculative},
        priors={
            "baseline": StepModel(s.prior_step_s, s.prior_step_per_request_s),
            "speculative": StepModel(s.prior_speculative_step_s, s.prior_speculative_step_per_request_s),
        },
    )


def load_oracle(path: Path | None) -> dict[str, Oracle]:
    if path is None:
        return {}
    raw = json.loads(path.read_text())
    return {rid: Oracle(float(v["tokens_per_step"]), float(v["output_tokens"])) for rid, v in raw.items()}


class Router:
    def __init__(self, settings: Settings, pool: BackendPool, learner: Learner) -> None:
        self.settings = settings
        self.pool = pool
        self.learner = learner
        self.oracle = load_oracle(settings.oracle_file) if settings.policy == "clairvoyant" else {}
        self.classifier = ClassifierConfig(settings.creative_temperature, settings.long_prompt_tokens,
                                           settings.chars_per_token, settings.default_max_tokens)
        self.rules = RulesConfig(tuple(settings.rules_speculative_classes), settings.rules_max_temperature,
                                 settings.rules_max_prompt_tokens, settings.rules_max_inflight)
        self.adaptive = AdaptiveConfig(
            margin=settings.margin, explore_rate=settings.explore_rate, explore_max_regret=settings.explore_max_regret,
            explore_max_output_tokens=settings.explore_max_output_tokens,
            explore_min_observations=settings.explore_min_observations,
            explore_unmeasured_max_regret=settings.explore_unmeasured_max_regret,
            explore_unmeasured_rate=settings.explore_unmeasured_rate,
            home_check=settings.home_check,
            externality_weight=settings.externality_weight)
        self._random = random.Random(settings.random_seed).random

    def estimates(self, f: Features, cls: str, bucket: str, request_id: str) -> Estimates:
        lrn = self.learner
        oracle = self.oracle.get(request_id)
        if oracle is not None:
            output, tps = min(oracle.output_tokens, float(f.max_tokens)), oracle.tokens_per_step
        else:
            output = lrn.output_tokens(cls, bucket, f.max_tokens, f.max_tokens_given)
            tps = lrn.tokens_per_step(cls, bucket)
        return Estimates(
            output_tokens=output,
            tokens_per_step=tps,
            baseline_model=lrn.step_model("baseline"),
            speculative_model=lrn.step_model("speculative"),
            baseline_interference=lrn.interference("baseline"),
            speculative_interference=lrn.interference("speculative"),
            baseline_prefill_s_per_token=lrn.prefill_s_per_token("baseline"),
            speculative_prefill_s_per_token=lrn.prefill_s_per_token("speculative"),
            speculative_observations=lrn.bucket_speculative_observations(bucket),
        )

    def route(self, view: RequestView, request_id: str, exclude: frozenset[Backend] = frozenset()) -> Routed | None:
        f = features(view, self.classifier)
        cls = classify(f, self.classifier)
        bucket = temperature_bucket(f.temperature)
        policy = self.settings.policy
        needs_estimates = policy in ("adaptive", "clairvoyant")
        inp = PolicyInput(
            features=f,
            cls=cls,
            available=self.pool.available_roles(time.monotonic(), exclude),
            baseline_load=Load(self.pool.role_inflight("baseline")),
            speculative_load=Load(self.pool.role_inflight("speculative")),
            estimates=self.estimates(f, cls, bucket, request_id) if needs_estimates else None,
            draw=self._random(),
        )
        decision = decide(policy, inp, self.rules, self.adaptive)
        return None if decision is None else Routed(decision, f, cls, bucket)
