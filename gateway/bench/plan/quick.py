"""The one-line layout advice of the demo's verdict and `specgate report`: the analytic pass alone (no
replays; well under a second), pointing at `specgate plan` for the replayed answer."""

from __future__ import annotations

from gateway.bench.plan.analytic import analytic_mean_s, shape_map
from gateway.bench.plan.layouts import has_dynamic_k, layouts
from gateway.workloads.items import WorkloadError, load_workload

WORDS = {"baseline": "baseline", "speculative": "speculative", "pair": "pairs (baseline + speculative sharing a GPU)",
         "dynk": "dynamic-K speculative"}


def describe(name: str) -> str:
    """`3xbaseline+1xspeculative` -> `1 speculative + 3 baseline` (speculative servers first)."""
    parts = [p.split("x", 1) for p in name.split("+")]
    parts.sort(key=lambda p: p[1] == "baseline")
    return " + ".join(f"{n} {WORDS.get(role, role)}" for n, role in parts)


def quick_layout(workload: str, profile: str, gpus: int = 4, limit: int = 120) -> str | None:
    """The analytically best layout of `gpus` GPUs for the workload at its own rate (simpler layouts win ties
    within 1%); None when the workload cannot be read or has no requests the drafter can measure."""
    try:
        items = load_workload(workload)[:limit]
    except (WorkloadError, OSError, ValueError):
        return None
    work = list(shape_map(items, profile).values())
    if len(items) < 2 or not work:
        return None
    rate = len(items) / max(items[-1].t - items[0].t, 1e-9)
    means = {lay.name: analytic_mean_s(lay, work, rate) for lay in layouts(gpus, has_dynamic_k(profile))}
    best = min(means.values())
    return next(name for name, mean in means.items() if mean <= best * 1.01)


def layout_sentence(workload: str, profile: str, gpus: int = 4) -> str | None:
    name = quick_layout(workload, profile, gpus)
    if name is None:
        return None
    return (f"On {gpus} GPUs of this traffic: {describe(name)} (a quick analytic estimate; "
            f"`specgate plan --gpus {gpus} --workload {workload} --profile {profile}` replays the closest layouts).")
