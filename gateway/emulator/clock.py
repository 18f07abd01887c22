"""Simulated time and the one GPU both servers share.

`SimClock` maps simulated seconds to the event loop's clock (`time_scale` real seconds per simulated
second). Engines sleep until absolute deadlines, so event-loop jitter does not accumulate.

`SharedGPU` serialises GPU work: a job is reserved on the GPU's timeline in the order engines ask,
starts when the GPU is free, and pays `ctx_switch_s` when the previous job belonged to the other server
(two processes without MPS take turns on the GPU). Load on one server therefore delays the other.
"""

from __future__ import annotations

import asyncio


class SimClock:
    def __init__(self, time_scale: float = 1.0) -> None:
        if time_scale <= 0:
            raise ValueError("time_scale must be > 0")
        self.time_scale = time_scale
        self._loop = asyncio.get_running_loop()
        self._t0 = self._loop.time()

    def now(self) -> float:
        """Simulated seconds since the clock started."""
        return (self._loop.time() - self._t0) / self.time_scale

    async def sleep_until(self, t_sim: float) -> None:
        delay = self._t0 + t_sim * self.time_scale - self._loop.time()
        await asyncio.sleep(max(delay, 0.0))


class SharedGPU:
    def __init__(self, ctx_switch_s: float = 0.0) -> None:
        self.ctx_switch_s = ctx_switch_s
        self.free_at = 0.0
        self.last_owner = ""
        self.busy_s: dict[str, float] = {}

    def reserve(self, owner: str, at: float, duration: float) -> float:
        """Reserve `duration` simulated seconds of GPU for `owner`, no earlier than `at`; returns the end."""
        if duration <= 0:
            return at
        start = max(at, self.free_at)
        if self.last_owner and self.last_owner != owner:
            duration += self.ctx_switch_s
        self.last_owner = owner
        self.free_at = start + duration
        self.busy_s[owner] = self.busy_s.get(owner, 0.0) + duration
        return self.free_at
