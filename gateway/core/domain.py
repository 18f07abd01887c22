"""The named sets of values the routing speaks in: server roles, task classes, decision reasons.

Each is a `Literal`, so a misspelt value is a type error, and code that branches on one ends in
`typing.assert_never` so a new value cannot be forgotten."""

from __future__ import annotations

from typing import Literal

Role = Literal["baseline", "speculative"]
ROLES: tuple[Role, Role] = ("baseline", "speculative")

TaskClass = Literal["structured", "code", "extraction", "chat", "creative", "long_context"]
TASK_CLASSES: tuple[TaskClass, ...] = ("structured", "code", "extraction", "chat", "creative", "long_context")

Reason = Literal[
    "n_gt_1", "no_speculative", "only_available",  # constrained: one choice only
    "rule_creative", "rule_default", "rule_long_prompt", "rule_busy", "rule_structured",  # rules
    "static", "hindsight", "round_robin", "least_loaded",  # fixed policies
    "oracle", "predicted_faster", "within_margin", "regime_baseline", "regime_speculative", "explore",  # cost
    "prefix_cache",  # one role to choose from: a backend holding part of the prompt over the least-loaded
]
