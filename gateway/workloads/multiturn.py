"""Multi-turn conversations: each turn's prompt is the conversation so far (every earlier question and answer)
plus a new question, so a server that served the previous turn holds most of the prompt in its prefix cache.

Each conversation keeps one task kind (its temperature and output format with it): code edits and JSON at
temperature 0 beside chat and creative writing at ~0.7-1.0, so speculation and prefix affinity pull apart. A
conversation starts as a Poisson arrival; its next turn comes after the reply (estimated at `STEP_S` a token)
and a think time of `THINK_S`. The turns of all conversations interleave.
"""

from __future__ import annotations

import random
from typing import Any

from gateway.workloads.corpus import Corpus
from gateway.workloads.generate import draw_task
from gateway.workloads.items import WorkloadItem
from gateway.workloads.task import approx_tokens

KINDS = {"chat": 30, "code_edit": 20, "code_gen": 10, "creative": 20, "json_object": 10, "extraction": 10}
THINK_S = (1.0, 5.0)
STEP_S = 0.008
MAX_TURNS = (3, 7)
MAX_PROMPT_CHARS = 20000  # a conversation ends before its prompt passes ~5,000 tokens


def _turn_body(task_body: dict[str, Any], history: list[dict[str, str]]) -> dict[str, Any]:
    body = dict(task_body)
    messages = [m for m in task_body.get("messages", []) if isinstance(m, dict)]
    system = [m for m in messages if m.get("role") == "system"]
    rest = [m for m in messages if m.get("role") != "system"]
    body["messages"] = (system if not history else []) + history + rest
    return body


def multi_turn(conversations: int, rate: float, seed: int, id_prefix: str = "multi-turn",
               corpus: Corpus | None = None) -> list[WorkloadItem]:
    """`conversations` conversations starting at `rate` per second, each of 3-7 turns, ordered by send time."""
    corpus = corpus or Corpus()
    rng = random.Random(seed)
    kinds = sorted(KINDS)
    items: list[WorkloadItem] = []
    start = 0.0
    for c in range(conversations):
        start += rng.expovariate(rate)
        kind = rng.choices(kinds, weights=[KINDS[k] for k in kinds])[0]
        history: list[dict[str, str]] = []
        t = start
        for turn in range(rng.randint(*MAX_TURNS)):
            task = draw_task(kind, corpus, rng)
            if task is None or task.endpoint != "/v1/chat/completions":
                break
            body = _turn_body(task.body, history)
            if sum(len(str(m.get("content", ""))) for m in body["messages"]) > MAX_PROMPT_CHARS:
                break
            items.append(WorkloadItem(id=f"{id_prefix}-{c:03d}-{turn}", t=round(t, 6), endpoint=task.endpoint,
                                      body=body, reference=task.reference, kind=task.kind))
            history = [*body["messages"], {"role": "assistant", "content": task.reference}]
            t += approx_tokens(task.reference) * STEP_S + rng.uniform(*THINK_S)
    items.sort(key=lambda i: i.t)
    return items
