"""`EmulatedFleet`: emulated vLLM servers on several simulated GPUs, one entry per GPU.

An entry is `pair` (a baseline and a speculative server time-sharing one GPU, as `EmulatedPair`),
`baseline` or `speculative` (one server with the GPU to itself) or `dynk` (a speculative server with the GPU
to itself whose γ follows vLLM's dynamic schedule by batch size, `DYNK_SCHEDULE`: it stops drafting under
load; the gateway sees a speculative server). All GPUs run on one simulated clock;
each has its own `SharedGPU`, so load on one GPU never slows another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aiohttp import web

from .clock import SharedGPU, SimClock
from .corpus import learned_model
from .profiles import DYNK_SCHEDULE, Profile, get_profile
from .served import Served
from .server import EmulatedServer

ENTRIES = ("pair", "baseline", "speculative", "dynk")


def parse_layout(text: str) -> list[str]:
    """`pair,baseline,speculative` or with counts, `2xbaseline,speculative`."""
    layout: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        count, _, entry = part.partition("x") if part[0].isdigit() else ("1", "", part)
        if entry not in ENTRIES or not count.isdigit() or int(count) < 1:
            raise ValueError(f"fleet entries are {', '.join(ENTRIES)} (optionally Nx...), got {part!r}")
        layout += [entry] * int(count)
    if not layout:
        raise ValueError("empty fleet")
    return layout


@dataclass(frozen=True, slots=True)
class FleetServer:
    role: str
    group: str
    url: str
    server: EmulatedServer


class EmulatedFleet(Served):
    """Async context manager: `async with EmulatedFleet(["baseline", "speculative"]) as fleet:` ->
    `fleet.servers`, `fleet.backends_setting()` (the value of `SPECGATE_BACKENDS`)."""

    def __init__(self, layout: Sequence[str], profile: str | Profile = "h200-ngram", host: str = "127.0.0.1",
                 time_scale: float = 1.0, model_name: str = "specgate-emu",
                 synthetic_acceptance_length: float | None = None, load_format: str = "auto",
                 ports: Sequence[int] = (), models: Sequence[str] = (),
                 adapters: Mapping[str, Sequence[str]] | None = None) -> None:
        self.layout = list(layout)
        # the model each GPU entry serves (`models[i]`, else `model_name`), and LoRA adapters per base model
        self.models = list(models)
        self.adapters = {base: tuple(names) for base, names in (adapters or {}).items()}
        self.profile = get_profile(profile) if isinstance(profile, str) else profile
        self.host = host
        self.time_scale = time_scale
        self.model_name = model_name
        self.synthetic_acceptance_length = synthetic_acceptance_length
        self.load_format = load_format
        self.ports = list(ports)
        self.references: dict[str, str] = {}
        self.prompts: dict[str, str] = {}  # request id -> its first prompt (a resumed completion's own part)
        self.acceptance: dict[str, float] = {}  # request id -> synthetic tokens per step (`register_acceptance`)
        self.servers: list[FleetServer] = []
        self._runners: list[web.AppRunner] = []

    def register_references(self, references: Mapping[str, str]) -> None:
        self.references.update(references)
        if self.profile.method == "draft_model" and self.synthetic_acceptance_length is None:
            learned_model(self.references)  # the draft learns them now, not inside the first timed request

    def register_acceptance(self, acceptance: Mapping[str, float]) -> None:
        """Synthetic tokens per speculative step by request id (see `drafter.Speculation`)."""
        self.acceptance.update(acceptance)

    def backends_setting(self) -> str:
        return ",".join(f"{s.role}={s.url}@{s.group}" for s in self.servers)

    def model_of(self, entry: int) -> str:
        return self.models[entry] if entry < len(self.models) else self.model_name

    def _make(self, role: str, clock: SimClock, gpu: SharedGPU, dynamic_k: bool = False,
              model: str | None = None) -> EmulatedServer:
        speculative = role == "speculative"
        profile = self.profile.with_overrides(spec_schedule=DYNK_SCHEDULE) if dynamic_k else self.profile
        model = model or self.model_name
        return EmulatedServer(role, profile, clock, gpu, self.references, model_name=model,
                              acceptance=self.acceptance, adapters=self.adapters.get(model, ()), prompts=self.prompts,
                              speculative=speculative, load_format=self.load_format,
                              synthetic_acceptance_length=self.synthetic_acceptance_length if speculative else None)

    async def start(self) -> None:
        self.clock = SimClock(self.time_scale)
        planned: list[tuple[str, str, EmulatedServer]] = []
        for i, entry in enumerate(self.layout):
            gpu = SharedGPU(self.profile.gpu_switch_loss)
            roles = {"pair": ("baseline", "speculative"), "dynk": ("speculative",)}.get(entry, (entry,))
            planned += [(role, f"gpu{i}", self._make(role, self.clock, gpu, entry == "dynk", self.model_of(i)))
                        for role in roles]
        try:
            for k, (role, group, server) in enumerate(planned):
                runner = web.AppRunner(server.create_app(), handler_cancellation=True, access_log=None)
                await runner.setup()
                self._runners.append(runner)
                site = web.TCPSite(runner, self.host, self.ports[k] if k < len(self.ports) else 0)
                await site.start()
                url = f"http://{self.host}:{runner.addresses[0][1]}"
                self.servers.append(FleetServer(role, group, url, server))
        except BaseException:
            await self.stop()
            raise
