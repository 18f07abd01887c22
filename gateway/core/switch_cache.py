"""Pure price of the prefix cache a shared GPU's regime switch leaves behind.

The two servers of a pair keep separate prefix caches. The one carrying the traffic holds the prefixes the traffic
repeats (system prompts, few-shot examples, the documents a conversation or a RAG answer pastes again); the idle one
holds none of them. After a switch, each of those prefixes is prefilled once more on the arriving server before it
hits there again, and with chunked prefill every request running on the GPU waits through that prefill.

Seen on the bursty built-in (results/idle-evidence-2026-12-06-r): a switch into speculation priced at 2.16-2.57 s of
co-running against a gain of 2.38-2.59 s cost ~7 s over the next 15 s; the gateway's prefix index read 32-40% of the
prompt tokens cached on the baseline before it and 1-3% on the n-gram server for the 15 s after it, and the excess
sat in the first bursts' time to first token (0.145 s against the static server's 0.092 s).

What a switch leaves behind is estimated from the group's recent requests: for each, the prefix its leaving server
held (named by the chained hash of its last held block, `core.prefix_index`) and how many of its tokens the arriving
server held too. A prefix held there was hit, so the traffic repeats it; each distinct one is prefilled again once,
its largest shortfall. Nested prefixes (a system prompt under several documents) count once per longer prefix: an
overestimate by the shared part, small beside the documents it heads.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from gateway.core.domain import Role


class HeldPrefix(NamedTuple):
    """One request's prompt prefix as each server of its pair held it at its decision: the hash of the last held
    block (0: none) and the prompt tokens held."""

    baseline_key: int = 0
    baseline_tokens: int = 0
    speculative_key: int = 0
    speculative_tokens: int = 0


NO_PREFIX = HeldPrefix()


def cold_prefix_tokens(recent: Iterable[HeldPrefix], to: Role) -> int:
    """Prompt tokens the arriving server `to` would prefill again for the prefixes the leaving server holds and the
    recent requests repeat: per distinct held prefix, the most any request held there beyond what `to` held."""
    lost: dict[int, int] = {}
    for p in recent:
        if to == "speculative":
            key, held, there = p.baseline_key, p.baseline_tokens, p.speculative_tokens
        else:
            key, held, there = p.speculative_key, p.speculative_tokens, p.baseline_tokens
        short = held - there
        if key and short > lost.get(key, 0):
            lost[key] = short
    return sum(lost.values())


def cold_cache_cost_s(tokens: int, prefill_s_per_token: float, arriving_load: float) -> float:
    """Summed latency of prefilling `tokens` again on a server carrying `arriving_load` requests: the prompts that
    wait for it, and every running request stalled through it (chunked prefill shares each step). Nothing to
    prefill costs nothing at any load, an unknown one (inf) included (0 x inf would be NaN, and a NaN price takes no
    switch: the first decisions of mixed-phases lost their free switch so); something to prefill at an unknown load
    costs inf, as a switch's co-running does (`core.regime.switch_price`)."""
    if tokens <= 0 or not prefill_s_per_token > 0:
        return 0.0
    return tokens * prefill_s_per_token * (1.0 + max(arriving_load, 0.0))
