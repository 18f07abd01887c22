"""`EmulatedPair`: a baseline and a speculative emulated vLLM server sharing one simulated GPU."""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web

from .clock import SharedGPU, SimClock
from .corpus import learned_model
from .profiles import Profile, get_profile
from .served import Served
from .server import EmulatedServer


class EmulatedPair(Served):
    """Async context manager; ports 0 pick free ports.

    `async with EmulatedPair(profile="h200-ngram") as pair:` -> `pair.baseline_url`, `pair.speculative_url`,
    `pair.register_references({request_id: text})`, `pair.baseline.stats`, `pair.speculative.stats`.
    """

    def __init__(
        self,
        profile: str | Profile = "h200-ngram",
        host: str = "127.0.0.1",
        baseline_port: int = 0,
        speculative_port: int = 0,
        time_scale: float = 1.0,
        model_name: str = "specgate-emu",
        synthetic_acceptance_length: float | None = None,
        load_format: str = "auto",
    ) -> None:
        self.profile = get_profile(profile) if isinstance(profile, str) else profile
        self.host = host
        self.ports = (baseline_port, speculative_port)
        self.time_scale = time_scale
        self.model_name = model_name
        self.synthetic_acceptance_length = synthetic_acceptance_length
        self.load_format = load_format
        self.references: dict[str, str] = {}
        self.prompts: dict[str, str] = {}  # request id -> its first prompt (a resumed completion's own part)
        self.acceptance: dict[str, float] = {}  # request id -> synthetic tokens per step (`register_acceptance`)
        self._runners: list[web.AppRunner] = []
        self.baseline_url = ""
        self.speculative_url = ""

    def register_references(self, references: Mapping[str, str]) -> None:
        """Reference texts by request id (header x-request-id); both servers see them."""
        self.references.update(references)
        if self.profile.method == "draft_model" and self.synthetic_acceptance_length is None:
            learned_model(self.references)  # the draft learns them now, not inside the first timed request

    def register_acceptance(self, acceptance: Mapping[str, float]) -> None:
        """Synthetic tokens per speculative step by request id (see `drafter.Speculation`)."""
        self.acceptance.update(acceptance)

    def set_time_scale(self, time_scale: float) -> None:
        """Change how many real seconds a simulated second takes, from now on."""
        self.time_scale = time_scale
        self.clock.rescale(time_scale)

    async def start(self) -> None:
        self.clock = SimClock(self.time_scale)
        self.gpu = SharedGPU(self.profile.gpu_switch_loss)
        common = {"references": self.references, "acceptance": self.acceptance, "model_name": self.model_name,
                  "prompts": self.prompts,
                  "load_format": self.load_format}
        self.baseline = EmulatedServer("baseline", self.profile, self.clock, self.gpu, **common)  # type: ignore[arg-type]
        self.speculative = EmulatedServer(
            "speculative", self.profile, self.clock, self.gpu, speculative=True,
            synthetic_acceptance_length=self.synthetic_acceptance_length, **common,  # type: ignore[arg-type]
        )
        urls = []
        try:
            for server, port in zip((self.baseline, self.speculative), self.ports, strict=True):
                runner = web.AppRunner(server.create_app(), handler_cancellation=True, access_log=None)
                await runner.setup()
                self._runners.append(runner)
                site = web.TCPSite(runner, self.host, port)
                await site.start()
                bound = runner.addresses[0][1]
                urls.append(f"http://{self.host}:{bound}")
        except BaseException:
            await self.stop()
            raise
        self.baseline_url, self.speculative_url = urls
