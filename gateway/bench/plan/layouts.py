"""The layouts of N GPUs that `specgate plan` compares, one EmulatedFleet entry per GPU."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.emulator.profiles import get_profile


@dataclass(frozen=True, slots=True)
class Layout:
    name: str
    entries: tuple[str, ...]  # EmulatedFleet entries, one per GPU

    @property
    def roles(self) -> dict[str, int]:
        return {role: self.entries.count(role) for role in ("baseline", "speculative", "pair", "dynk")}


def _name(parts: list[tuple[int, str]]) -> str:
    return "+".join(f"{n}x{role}" for n, role in parts if n)


def speculating_gpus(name: str) -> int | None:
    """How many GPUs of the layout named `name` (as `_name` writes it) run a speculative server (None for pairs:
    every GPU runs both)."""
    if "pair" in name:
        return None
    return sum(int(count) for count, role in (part.split("x", 1) for part in name.split("+"))
               if role in ("speculative", "dynk"))


def has_dynamic_k(profile: str) -> bool:
    """A dynamic-K single server is laid out where the profile's method supports vLLM's
    `num_speculative_tokens_per_batch_size` (n-gram lookup: the emulator's `h200-ngram-dynk` schedule) and
    its speculative server does not already follow a schedule (then every speculative layout is dynamic-K)."""
    p = get_profile(profile)
    return p.method == "ngram" and p.spec_schedule is None


def layouts(gpus: int, dynamic_k: bool = False) -> list[Layout]:
    """k speculative + N − k baseline (k = 0..N), N pairs and, with `dynamic_k`, k dynamic-K + N − k baseline
    servers (k = 1..N)."""
    out = []
    for k in range(gpus + 1):
        out.append(Layout(_name([(gpus - k, "baseline"), (k, "speculative")]),
                          ("speculative",) * k + ("baseline",) * (gpus - k)))
    out.append(Layout(f"{gpus}xpair", ("pair",) * gpus))
    if dynamic_k:
        for k in range(1, gpus + 1):
            out.append(Layout(_name([(gpus - k, "baseline"), (k, "dynk")]), ("dynk",) * k + ("baseline",) * (gpus - k)))
    return out
