"""Pure share of a request's decode that other prompts' prefill takes on a server with a GPU of its own.

With chunked prefill (vLLM's default) a prompt that arrives while a request decodes is prefilled inside the
request's steps: each such step carries a prefill chunk and lasts as long as the chunk takes. The learner fits its
step model net of that work (`Learner._decode_s`: left in, it grew with the load and bent the fit), so a prediction
from the step model alone is the decode *without* the prompts that will arrive during it. On Mooncake's long prompts
(mooncake-b, 2 + 2 fleet, results/fleet-predict-2026-12-06-k) that was the largest term of the prediction error: the
decode was predicted at 0.71x what it took (median), the step at 0.75x, and the end-to-end error read 0.25; the
prefill of the prompts that arrived on the same server during each decode, added back, took it to 0.15.

What is learned is what the learner took out: per role, the prefill seconds it netted out of the decodes it observed
over those decodes' seconds (a ratio of sums: each response weighs its decode seconds over the mean decode's, at most
`WEIGHT_MAX`; every decode counts, most with no prompt arriving). A prediction on such a server divides its decode by
(1 − share): the prompts that arrive take that share of its steps' time, on average. On a shared GPU (a pair) the
regime prices what the pair shares, and nothing here applies. Not persisted (`learner_state`): re-learned from the
first decodes, as the per-request cells are.
"""

from __future__ import annotations

from gateway.core.domain import ROLES, Role
from gateway.core.ewma import Ewma

SHARE_MAX = 0.5  # the most of a decode that arrivals' prefill may be said to take (the predicted decode at most 2x)
WEIGHT_MAX = 4.0  # a response's weight: its decode seconds over the mean decode's, at most this


class DecodeStall:
    """Per role, the share of decode time that other prompts' prefill took, on servers with a GPU of their own."""

    def __init__(self, forgetting: float) -> None:
        self.forgetting = forgetting
        self._share = {role: Ewma(0.0) for role in ROLES}
        self._decode_s = Ewma(0.0)  # decode seconds per observed response: the unit of its weight

    def observe(self, role: Role, decode_s: float, prefill_s: float) -> None:
        """A response decoded for `decode_s` seconds, `prefill_s` of them others' prefill (as the learner found)."""
        if not decode_s > 0 or not prefill_s >= 0:
            return
        mean = self._decode_s.value if self._decode_s.weight > 0 else decode_s
        self._decode_s.update(decode_s, self.forgetting)
        self._share[role].update(min(prefill_s / decode_s, SHARE_MAX), self.forgetting,
                                 w=min(decode_s / max(mean, 1e-9), WEIGHT_MAX))

    def share(self, role: Role) -> float:
        """The share of a decode that arrivals' prefill takes (0 until measured), in [0, `SHARE_MAX`]."""
        return min(max(self._share[role].value, 0.0), SHARE_MAX)
