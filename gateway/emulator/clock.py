"""Simulated time and the one GPU both servers share.

`SimClock` maps simulated seconds to the event loop's clock (`time_scale` real seconds per simulated
second). Engines sleep until absolute deadlines, so event-loop jitter does not add up.

`SharedGPU` is time-sliced like one GPU used by two processes without MPS: while k > 1 servers have GPU
work pending, each progresses at (1 - switch_loss) / k of the GPU (processor sharing; `switch_loss` is
the throughput lost to context switches), alone at full speed. A job's end therefore moves later when
the other server submits work, and load on one server slows the other.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass


class SimClock:
    def __init__(self, time_scale: float = 1.0) -> None:
        if time_scale <= 0:
            raise ValueError("time_scale must be > 0")
        self.time_scale = time_scale
        self._loop = asyncio.get_running_loop()
        self._t0 = self._loop.time()

    def rescale(self, time_scale: float) -> None:
        """Change the speed of simulated time from now on (simulated time stays continuous)."""
        now = self.now()
        self.time_scale = time_scale
        self._t0 = self._loop.time() - now * time_scale

    def now(self) -> float:
        """Simulated seconds since the clock started."""
        return (self._loop.time() - self._t0) / self.time_scale

    async def sleep_until(self, t_sim: float) -> None:
        delay = self._t0 + t_sim * self.time_scale - self._loop.time()
        await asyncio.sleep(max(delay, 0.0))


@dataclass(eq=False, slots=True)
class GpuJob:
    owner: str
    remaining: float  # GPU-seconds of work left (at full speed)
    finished_at: float | None = None


class SharedGPU:
    def __init__(self, switch_loss: float = 0.0) -> None:
        self.switch_loss = switch_loss
        self.t_ref = 0.0  # the active jobs' `remaining` is as of this simulated time
        self.active: list[GpuJob] = []
        self.busy_s: dict[str, float] = {}

    def _rate(self, k: int) -> float:
        return 1.0 if k <= 1 else (1.0 - self.switch_loss) / k

    def _step(self, jobs: list[GpuJob], t: float, until: float) -> float:
        """Run `jobs` (mutated) from t to the next completion or `until`, whichever is first."""
        r = self._rate(len(jobs))
        dt = min(min(j.remaining for j in jobs) / r, until - t)
        t += dt
        for j in list(jobs):
            j.remaining -= dt * r
            if j.remaining <= 1e-12:
                j.remaining = 0.0
                j.finished_at = t
                jobs.remove(j)
        return t

    def advance(self, now: float) -> None:
        t = self.t_ref
        while self.active and t < now:
            t = self._step(self.active, t, now)
        self.t_ref = max(self.t_ref, now)

    def submit(self, owner: str, at: float, work: float) -> GpuJob:
        """Start `work` GPU-seconds for `owner` at simulated time `at` (or the GPU's present, if later)."""
        self.advance(at)
        job = GpuJob(owner, max(work, 0.0))
        self.busy_s[owner] = self.busy_s.get(owner, 0.0) + job.remaining
        if job.remaining <= 0:
            job.finished_at = self.t_ref
        else:
            self.active.append(job)
        return job

    def end_of(self, job: GpuJob) -> float:
        """When `job` finishes if nobody submits more work."""
        if job.finished_at is not None:
            return job.finished_at
        copies = {id(j): GpuJob(j.owner, j.remaining) for j in self.active}
        mine = copies[id(job)]
        jobs = list(copies.values())
        t = self.t_ref
        while mine.finished_at is None:
            t = self._step(jobs, t, float("inf"))
        return mine.finished_at
