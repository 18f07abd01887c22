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

from gateway.core.costmodel import Stall
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


class SharedStall:
    """A saturated shared GPU's steps: seconds of other requests' prefill per decode step, per request of the GPU's
    load beyond `from_load` (the regime's load cap), the same whichever of the pair runs the step.

    Above the cap a pair's queue holds prompts not yet prefilled, and chunked prefill runs them inside every step:
    on the Azure code burst (840:40, 2.2k-token prompts at 14 requests/s, 190 requests on the GPU on average) a
    baseline decode step took ~130 ms where the step model, fitted net of prefill, said ~20, and on Azure code 1200:60's
    burst 93 ms at 42 against 8. A step's own work differs by role (the speculative step verifies drafts), the chunk
    of others' prompts does not: the same model prefills alike, and with a queue every step carries one. So a request
    whose decode sits in that queue costs its *steps*, and one that speculates takes fewer: the n-gram server alone was
    6% faster on both windows (code answers copy, ~1.4 tokens a step), while the step models read it 20-30% dearer.
    Learned as a ratio of sums over a shared GPU's responses with the other server idle and the load above
    `from_load`: Σ (decode − steps · own step at its load) / Σ steps · (load − `from_load`), forgetting old ones."""

    def __init__(self, forgetting: float, from_load: float) -> None:
        self.forgetting, self.from_load = forgetting, from_load
        self._stall_s = 0.0  # Σ decode seconds the step models leave unexplained (forgetting)
        self._steps_load = 0.0  # Σ decode steps · load beyond `from_load` (forgetting)

    def observe(self, decode_s: float, steps: int, load: float, own_step_s: float) -> None:
        """A response's `steps` decode steps took `decode_s` at `load` (its server's, at its decision); its role's
        step model says `own_step_s` a step there."""
        beyond = load - self.from_load
        if steps < 2 or beyond <= 0 or not decode_s > 0 or not own_step_s >= 0:
            return
        f = self.forgetting
        self._stall_s = self._stall_s * f + (decode_s - steps * own_step_s)
        self._steps_load = self._steps_load * f + steps * beyond

    def per_request_s(self) -> float:
        """Seconds of others' prefill per step per request of load beyond `from_load` (0 until measured, never < 0)."""
        return max(self._stall_s / self._steps_load, 0.0) if self._steps_load > 0 else 0.0

    def model(self) -> Stall:
        """What the cost model reads (`costmodel.Stall`)."""
        return Stall(self.per_request_s(), self.from_load)
