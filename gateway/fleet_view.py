"""What the router adds for a fleet of servers that differ in what they hold: the models each serves
(`served_models`), the prompt prefixes each has likely cached (`core.prefix_index`), and the backend each client
session last went to (its affinity, a tie-breaker).

Per request: the backends that do not serve its model (never candidates), the prompt tokens each candidate has
likely cached (the cost model prefills only the rest), and the session's last backend. After the decision the
prompt's blocks go into the chosen backend's index. Memory is bounded: each index by its capacity, the
sessions by `MAX_SESSIONS` (least recently seen forgotten).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence

from gateway.backends import Backend
from gateway.core.prefix_index import PrefixIndex, cached_tokens, capacity_blocks, token_scale
from gateway.core.protocol import RequestView
from gateway.core.switch_cache import NO_PREFIX, HeldPrefix
from gateway.served_models import ServedModels, model_not_found

MAX_SESSIONS = 65536


class FleetView:
    def __init__(self, names: Iterable[str], *, prefix_aware: bool, default_kv_tokens: int, max_blocks: int,
                 chars_per_token: float) -> None:
        names = list(names)
        self.models = ServedModels(names)
        self.prefix_aware = prefix_aware
        self.chars_per_token = chars_per_token
        start = capacity_blocks(default_kv_tokens, chars_per_token)
        self.indexes = {n: PrefixIndex(start, max_blocks) for n in names}
        self.kv_tokens: dict[str, int] = {}  # each server's KV capacity, once its scrape says
        self.scale: dict[str, float] = {}  # its `token_scale` (absent: 1)
        self._scale_from: dict[str, tuple[float, float]] = {}  # (sent, looked up) when its span began
        self.sessions: OrderedDict[str, str] = OrderedDict()
        self._hits = 0  # decisions whose chosen backend had some of the prompt cached (for /admin/state)
        self._decisions = 0

    def off_model(self, model: str, backends: Sequence[Backend]) -> frozenset[Backend]:
        """The backends that do not serve `model`; `ModelNotFound` (404) when none does."""
        names = self.models.not_serving(model)
        if not names:
            return frozenset()
        if len(names) == len(backends):
            raise model_not_found(model)
        return frozenset(b for b in backends if b.name in names)

    def set_capacity(self, name: str, kv_tokens: int) -> None:
        """The server's KV capacity in tokens (from its `vllm:cache_config_info`)."""
        self.kv_tokens[name] = kv_tokens
        self._resize(name)

    def _resize(self, name: str) -> None:
        index, kv = self.indexes.get(name), self.kv_tokens.get(name)
        if index is not None and kv is not None:
            index.resize(capacity_blocks(int(kv * self.scale.get(name, 1.0)), self.chars_per_token))

    def calibrate(self, name: str, sent_tokens: float, looked_up_tokens: float) -> None:
        """The prompt tokens this process estimated it sent `name`, ever, and those the server says it looked up
        in its prefix cache, ever: the index's capacity follows their ratio since the first call (a counter that
        went back, a restarted server, starts the span again)."""
        start = self._scale_from.setdefault(name, (sent_tokens, looked_up_tokens))
        sent, looked_up = sent_tokens - start[0], looked_up_tokens - start[1]
        if sent < 0 or looked_up < 0:
            self._scale_from[name] = (sent_tokens, looked_up_tokens)
            return
        scale = token_scale(sent, looked_up)
        if scale is not None and abs(scale - self.scale.get(name, 1.0)) > 0.02:
            self.scale[name] = scale
            self._resize(name)

    def learner_class(self, task_class: str, model: str) -> str:
        """The class the learner keys on: per model where the fleet serves several (their acceptance and
        lengths differ), the plain class where it serves one."""
        if self.models.distinct() <= 1:
            return task_class
        return f"{task_class}@{model.replace('/', ':')}"  # the learner's state keys are "class/bucket"

    def matched(self, view: RequestView, names: Iterable[str]) -> dict[str, int]:
        """The leading prompt blocks each of `names` likely holds (only those with some): one lookup per request,
        read by `cached` and `held_prefix`."""
        blocks = view.prefix_blocks
        if not self.prefix_aware or not blocks:
            return {}
        out = {}
        for name in names:
            index = self.indexes.get(name)
            held = index.match(blocks) if index is not None else 0
            if held:
                out[name] = held
        return out

    def cached(self, matched: Mapping[str, int], prompt_tokens: int) -> dict[str, int]:
        """Prompt tokens each backend of `matched` has likely cached."""
        return {name: cached_tokens(m, prompt_tokens, self.chars_per_token) for name, m in matched.items()}

    def held_prefix(self, view: RequestView, prompt_tokens: int, members: Iterable[Backend],
                    matched: Mapping[str, int]) -> HeldPrefix:
        """A shared GPU's request: the prefix each role's server holds (`core.switch_cache`), before it is routed
        (`matched`: its candidates' `matched`; a member that was not a candidate holds nothing that counts)."""
        held = {b.role: (view.prefix_blocks[m - 1], cached_tokens(m, prompt_tokens, self.chars_per_token))
                for b in members if (m := matched.get(b.name, 0))}
        if not held:
            return NO_PREFIX
        (kb, tb), (ks, ts) = held.get("baseline", (0, 0)), held.get("speculative", (0, 0))
        return HeldPrefix(kb, tb, ks, ts)

    def session(self, view: RequestView, header: str | None) -> str | None:
        """The client's session key: the `x-session-id` header, else the body's `user`."""
        key = header or view.user
        return key[:256] if key else None

    def affinity(self, session: str | None) -> str | None:
        return None if session is None else self.sessions.get(session)

    def routed(self, view: RequestView, session: str | None, backend: str, cached: Mapping[str, int]) -> None:
        """After the decision: the prompt is now (about to be) cached there; the session goes there."""
        self._decisions += 1
        if cached.get(backend):
            self._hits += 1
        index = self.indexes.get(backend)
        if index is not None and view.prefix_blocks and self.prefix_aware:
            index.insert(view.prefix_blocks)
        if session is not None:
            sessions = self.sessions
            sessions[session] = backend
            sessions.move_to_end(session)
            if len(sessions) > MAX_SESSIONS:
                sessions.popitem(last=False)

    def state(self) -> dict[str, object]:
        return {
            "models": self.models.state(),
            "prefix_aware": self.prefix_aware,
            "prefix_index_blocks": {n: len(i) for n, i in self.indexes.items()},
            "prefix_index_capacity": {n: i.capacity for n, i in self.indexes.items()},
            "prefix_index_scale": {n: round(v, 3) for n, v in self.scale.items()},
            "decisions_with_cached_prefix": self._hits, "decisions": self._decisions,
            "sessions": len(self.sessions),
        }
