"""One emulated vLLM 0.26 OpenAI-compatible server (aiohttp): the HTTP side of an `Engine`."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import orjson
from aiohttp import web

from gateway.workloads.items import is_tokens_per_step

from .clock import SharedGPU, SimClock
from .corpus import LearnedModel, learned_model
from .drafter import Speculation, request_seed
from .engine import Engine, RequestHandle, Sequence, StepEvent
from .metrics import EngineMetrics
from .prefix_cache import block_hashes
from .profiles import Profile
from .resume import continued_reference
from .stats import ServerStats
from .target import dummy_output, target_output
from .text import tokenize
from .wire import ApiError, GenRequest, Kind, chunk, full_response, new_id, parse_request, stream_choice, usage

VLLM_VERSION = "0.26.0"
SSE_HEADERS = {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"}


class EmulatedServer:
    """A baseline (`speculative=False`) or speculative server on a shared simulated GPU."""

    def __init__(
        self,
        role: str,
        profile: Profile,
        clock: SimClock,
        gpu: SharedGPU,
        references: dict[str, str],
        model_name: str = "specgate-emu",
        speculative: bool = False,
        synthetic_acceptance_length: float | None = None,
        load_format: str = "auto",
        acceptance: dict[str, float] | None = None,
        adapters: tuple[str, ...] = (),
        prompts: dict[str, str] | None = None,
    ) -> None:
        self.role = role
        self.adapters = adapters  # LoRA adapters served beside the base model (listed with `parent`)
        self.acceptance = {} if acceptance is None else acceptance  # request id -> tokens per step (synthetic)
        self.dummy_weights = load_format == "dummy"
        self.profile = profile
        self.model_name = model_name
        self.speculative = speculative
        self.synthetic_acceptance_length = synthetic_acceptance_length
        self.references = references
        # request id -> the prompt of its first request with a reference (shared by the servers of a GPU): a
        # completion resumed as that prompt + text so far continues the reference after exactly that text
        self.prompts: dict[str, str] = {} if prompts is None else prompts
        self.stats = ServerStats()
        self.metrics = EngineMetrics(model_name, speculative, profile.gamma)
        self.engine = Engine(role, profile, clock, gpu, self.metrics, self.stats, speculative)
        self.metrics.cache_config(self.engine.kv_blocks, profile.block_size)
        self.created = int(time.time())

    def create_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/completions", self._completions)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/health", self._health)
        app.router.add_get("/ping", self._health)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/version", self._version)
        app.router.add_post("/emulator/references", self._references)
        app.on_startup.append(self._on_startup)
        app.on_cleanup.append(self._on_cleanup)
        return app

    async def _on_startup(self, _app: web.Application) -> None:
        self.engine.start()

    async def _on_cleanup(self, _app: web.Application) -> None:
        await self.engine.stop()

    # -- simple endpoints --------------------------------------------------------------------------
    async def _health(self, _request: web.Request) -> web.Response:
        return web.Response(status=200)

    async def _version(self, _request: web.Request) -> web.Response:
        return _json({"version": VLLM_VERSION})

    async def _metrics(self, _request: web.Request) -> web.Response:
        return web.Response(body=self.metrics.render(), headers={"Content-Type": "text/plain; version=0.0.4"})

    async def _models(self, _request: web.Request) -> web.Response:
        cards = [self._card(name, None if name == self.model_name else self.model_name)
                 for name in (self.model_name, *self.adapters)]
        return _json({"object": "list", "data": cards})

    def _card(self, name: str, parent: str | None) -> dict[str, Any]:
        """vLLM's model card: a LoRA adapter's `parent` is its base model, its `root` the adapter's path."""
        return {
            "id": name, "object": "model", "created": self.created, "owned_by": "vllm",
            "root": name if parent is None else f"/adapters/{name}", "parent": parent,
            "max_model_len": self.profile.max_model_len,
            "permission": [{
                "id": f"modelperm-{uuid.uuid4().hex}", "object": "model_permission", "created": self.created,
                "allow_create_engine": False, "allow_sampling": True, "allow_logprobs": True,
                "allow_search_indices": False, "allow_view": True, "allow_fine_tuning": False,
                "organization": "*", "group": None, "is_blocking": False,
            }],
        }

    async def _references(self, request: web.Request) -> web.Response:
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            return self._error(ApiError("Invalid JSON body."))
        refs = body.get("references", body) if isinstance(body, dict) else None
        if not isinstance(refs, dict) or not all(isinstance(v, str) for v in refs.values()):
            return self._error(ApiError("Expected a JSON object {request_id: reference_text}."))
        accept = body.get("acceptance", {}) if "references" in body else {}
        if not isinstance(accept, dict) or not all(is_tokens_per_step(v) for v in accept.values()):
            return self._error(ApiError("Expected acceptance as {request_id: tokens_per_step in [1, 64]}."))
        self.references.update({str(k): v for k, v in refs.items()})
        self.acceptance.update({str(k): float(v) for k, v in accept.items()})
        self._learned(None)  # the draft learns them now, not inside the first timed request
        return _json({"registered": len(refs), "total": len(self.references), "acceptance": len(self.acceptance)})

    # -- generation ----------------------------------------------------------------------------------
    async def _chat(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, "chat")

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, "completion")

    def _error(self, err: ApiError) -> web.Response:
        self.stats.errors += 1
        return _json(err.body(), status=err.status)

    async def _generate(self, request: web.Request, kind: Kind) -> web.StreamResponse:
        try:
            try:
                body = orjson.loads(await request.read())
            except orjson.JSONDecodeError as exc:
                raise ApiError(f"Invalid JSON body: {exc}") from None
            asked = body.get("model") if isinstance(body, dict) else None
            req = parse_request(body, kind, asked if asked in self.adapters else self.model_name)
            header_id = request.headers.get("x-request-id")
            handle, prompt_len = self._build(req, header_id)
        except ApiError as err:
            return self._error(err)
        self.engine.submit(handle)
        try:
            if req.stream:
                return await self._stream(request, req, handle, prompt_len)
            return await self._collect(req, handle, prompt_len)
        except (asyncio.CancelledError, ConnectionError):
            self.engine.abort(handle)
            raise

    def _build(self, req: GenRequest, header_id: str | None) -> tuple[RequestHandle, int]:
        prompt_tokens = tokenize(req.prompt)
        prompt_len = req.prompt_token_count or max(len(prompt_tokens), 1)
        limit = self.profile.max_model_len
        max_tokens = req.max_tokens if req.max_tokens is not None else limit - prompt_len
        if prompt_len + max_tokens > limit:
            raise ApiError(
                f"This model's maximum context length is {limit} tokens. However, you requested "
                f"{prompt_len + max_tokens} tokens ({prompt_len} in the messages, {max_tokens} in the completion). "
                "Please reduce the length of the messages or completion.",
                param="max_tokens",
            )
        reference = self.references.get(header_id) if header_id else None
        if reference is not None and header_id:  # a resumed request continues the reference after the partial text
            first = self.prompts.setdefault(header_id, req.prompt)
            partial = req.partial
            if partial is None and len(req.prompt) > len(first) and req.prompt.startswith(first):
                partial = req.prompt[len(first):]  # a completion resumed as its prompt + the text so far
            reference = continued_reference(reference, partial, req.prompt)
        seed = request_seed(req.prompt, reference)
        learned = self._learned(header_id)
        handle = RequestHandle(header_id or uuid.uuid4().hex)
        hashes = block_hashes(prompt_tokens, self.profile.block_size) if req.prompt_token_count is None else []
        for i in range(req.n):
            out = (
                dummy_output(max_tokens, req.temperature, seed + i)
                if self.dummy_weights
                else target_output(prompt_tokens, reference, max_tokens, req.ignore_eos, seed)
            )
            spec = (
                Speculation(self.profile, prompt_tokens, req.temperature, seed + i, self.synthetic_acceptance_length,
                            self.acceptance.get(header_id) if header_id else None, learned)
                if self.speculative
                else None
            )
            seq = Sequence(handle.request_id, i, prompt_len, out.tokens, out.finish_reason, spec, handle.queue, 0.0)
            seq.block_hashes = hashes
            handle.seqs.append(seq)
        return handle, prompt_len

    def _learned(self, header_id: str | None) -> LearnedModel | None:
        """What the emulated draft model learned: the other registered references (never this request's own)."""
        if not self.speculative or self.profile.method != "draft_model" or self.synthetic_acceptance_length is not None:
            return None
        return learned_model(self.references).without(self.references.get(header_id) if header_id else None)

    async def _events(self, handle: RequestHandle) -> list[StepEvent]:
        """The next batch of step events (everything queued, at least one)."""
        events = [await handle.queue.get()]
        while not handle.queue.empty():
            events.append(handle.queue.get_nowait())
        return events

    async def _collect(self, req: GenRequest, handle: RequestHandle, prompt_len: int) -> web.Response:
        texts = [""] * req.n
        counts = [0] * req.n
        reasons = [""] * req.n
        pending = req.n
        while pending:
            for ev in await self._events(handle):
                texts[ev.index] += "".join(ev.tokens)
                counts[ev.index] += len(ev.tokens)
                if ev.finish_reason is not None:
                    reasons[ev.index] = ev.finish_reason
                    pending -= 1
        rid = new_id(req.kind)
        return _json(full_response(req.kind, rid, req.model, texts, reasons, usage(prompt_len, sum(counts))))

    async def _stream(
        self, request: web.Request, req: GenRequest, handle: RequestHandle, prompt_len: int
    ) -> web.StreamResponse:
        resp = web.StreamResponse(status=200, headers=SSE_HEADERS)
        await resp.prepare(request)
        rid, created, kind, model = new_id(req.kind), int(time.time()), req.kind, req.model
        counts = [0] * req.n
        pending = req.n
        first = True
        while pending:
            out: list[bytes] = []
            for ev in await self._events(handle):
                if first and kind == "chat":
                    for i in range(req.n):
                        use = usage(prompt_len, 0) if req.continuous_usage else None
                        role_choice = stream_choice(kind, i, "", None, role=True)
                        out.append(_sse(chunk(kind, rid, created, model, [role_choice], use)))
                first = False
                counts[ev.index] += len(ev.tokens)
                if ev.finish_reason is not None:
                    pending -= 1
                use = usage(prompt_len, counts[ev.index]) if req.continuous_usage else None
                choice = stream_choice(kind, ev.index, "".join(ev.tokens), ev.finish_reason)
                out.append(_sse(chunk(kind, rid, created, model, [choice], use)))
            await resp.write(b"".join(out))
        tail = []
        if req.include_usage:
            tail.append(_sse(chunk(kind, rid, created, model, [], usage(prompt_len, sum(counts)))))
        tail.append(b"data: [DONE]\n\n")
        await resp.write(b"".join(tail))
        await resp.write_eof()
        return resp


def _sse(obj: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def _json(obj: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(obj), status=status, content_type="application/json")
