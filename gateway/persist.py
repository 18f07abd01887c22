"""Learned state that survives restarts: a state file, and a warm start from a running peer.

The file (`SPECGATE_STATE_FILE`) is written every `SPECGATE_STATE_SAVE_INTERVAL_S` and on shutdown, atomically
(a temporary file renamed over the old one), and read at start. A missing, corrupt, foreign or other-version
file is logged and ignored: the gateway starts from its priors, never crashes. Without a usable file, a new
replica asks all of `SPECGATE_PEERS` at once for `GET /admin/learner` (with `SPECGATE_ADMIN_API_KEY`), under one
deadline (`PEER_DEADLINE_S`: hung peers cost it once, not once each), and keeps the first usable answer.

A state is input, not trusted memory: at most `MAX_STATE_BYTES` are read (a peer's body as a stream, stopped at
the cap), parsed strictly (no NaN or Infinity), and range-checked by `import_state` (known keys, finite values
within bounds of the priors; what it clamps or drops is logged). Every imported estimate's weight is capped at
`SPECGATE_STATE_MAX_WEIGHT` observations, and estimates keep decaying: a warm start is a prior, not a lock-in.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from gateway.core.learner import Learner
from gateway.core.learner_state import export_state, import_state
from gateway.router import Router
from gateway.settings import Settings

log = logging.getLogger("specgate.persist")
FORMAT = "specgate-learner"
MAX_STATE_BYTES = 1 << 20  # a real state is a few KB (18 classes x 4 tables, 2 roles, a regime per GPU)
PEER_DEADLINE_S = 3.0  # for all peers together


def _event(**fields: object) -> str:
    return orjson.dumps(fields).decode()


def state_document(learner: Learner, router: Router | None = None) -> dict[str, Any]:
    """The learner's estimates and, with a router, which server carries each shared GPU (its regime): a
    restarted or new replica then joins the fleet's regime instead of starting at baseline."""
    document: dict[str, Any] = {"format": FORMAT, "saved_at": time.time(), "learner": export_state(learner)}
    if router is not None:
        document["regimes"] = router.export_regimes()
    return document


def save(path: Path, learner: Learner, router: Router | None = None) -> None:
    """Write the state atomically: readers see the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(orjson.dumps(state_document(learner, router)))
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def parse(raw: bytes) -> object:
    """A state document from bytes: strict JSON (orjson: no NaN, no Infinity, no number that overflows a
    float), at most `MAX_STATE_BYTES`. ValueError otherwise."""
    if len(raw) > MAX_STATE_BYTES:
        raise ValueError(f"larger than {MAX_STATE_BYTES} bytes")
    return orjson.loads(raw)  # orjson.JSONDecodeError is a ValueError


def load_document(learner: Learner, document: object, max_weight: float, source: str,
                  router: Router | None = None) -> bool:
    """Import a state document; log and return False if it is not one of ours."""
    try:
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise ValueError("not a specgate learner state")
        notes = import_state(learner, document["learner"], max_weight)
    except (ValueError, KeyError, TypeError) as exc:
        log.warning(_event(event="state_ignored", source=source, why=str(exc)[:500]))
        return False
    for note in notes:
        log.warning(_event(event="state_clamped", source=source, why=note))
    regimes = document.get("regimes")
    if router is not None and isinstance(regimes, dict) and len(regimes) <= 1024:
        router.import_regimes(regimes)
    log.info(_event(event="state_loaded", source=source, clamped=len(notes)))
    return True


def load_file(path: Path, learner: Learner, max_weight: float, router: Router | None = None) -> bool:
    try:
        with path.open("rb") as f:
            document = parse(f.read(MAX_STATE_BYTES + 1))
    except FileNotFoundError:
        log.info(_event(event="state_missing", path=str(path)))
        return False
    except (OSError, ValueError) as exc:
        log.warning(_event(event="state_ignored", source=str(path), why=f"unreadable: {exc}"))
        return False
    return load_document(learner, document, max_weight, str(path), router)


async def _fetch_peer(session: aiohttp.ClientSession, peer: str, headers: dict[str, str]) -> object:
    """One peer's state document, read as a stream and stopped at `MAX_STATE_BYTES`."""
    async with session.get(peer.rstrip("/") + "/admin/learner", headers=headers, allow_redirects=False) as r:
        if r.status != 200:
            raise ValueError(f"status {r.status}")
        if (r.content_length or 0) > MAX_STATE_BYTES:
            raise ValueError(f"announces {r.content_length} bytes (at most {MAX_STATE_BYTES})")
        body = bytearray()
        async for chunk in r.content.iter_chunked(64 * 1024):
            body += chunk
            if len(body) > MAX_STATE_BYTES:
                raise ValueError(f"larger than {MAX_STATE_BYTES} bytes")
        return parse(bytes(body))


async def warm_start_from_peers(session: aiohttp.ClientSession, settings: Settings, learner: Learner,
                                router: Router | None = None, deadline_s: float = PEER_DEADLINE_S) -> bool:
    """Ask every peer at once; import the first usable answer, within `deadline_s` for all of them."""
    headers = {}
    if settings.admin_api_key is not None:
        headers["Authorization"] = "Bearer " + settings.admin_api_key.get_secret_value()
    tasks = {asyncio.ensure_future(_fetch_peer(session, peer, headers)): peer for peer in settings.peers}
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline_s
    pending = set(tasks)
    try:
        while pending:
            done, pending = await asyncio.wait(pending, timeout=max(end - loop.time(), 0.0),
                                               return_when=asyncio.FIRST_COMPLETED)
            if not done:
                break
            for task in done:
                peer = tasks[task]
                exc = task.exception()
                if exc is not None:
                    log.warning(_event(event="peer_unavailable", peer=peer, why=str(exc)[:500] or type(exc).__name__))
                elif load_document(learner, task.result(), settings.state_max_weight, peer, router):
                    return True
        for task in pending:
            log.warning(_event(event="peer_unavailable", peer=tasks[task], why=f"no answer within {deadline_s} s"))
        return False
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


async def restore(session: aiohttp.ClientSession, settings: Settings, learner: Learner,
                  router: Router | None = None) -> None:
    """At start: the state file, else a peer."""
    if settings.state_file is not None and load_file(settings.state_file, learner, settings.state_max_weight,
                                                     router):
        return
    if settings.peers:
        await warm_start_from_peers(session, settings, learner, router)


async def every(interval_s: float, name: str, step: Callable[[], object], *, first: bool = False) -> None:
    """Run `step` every `interval_s` until cancelled. A step that fails is logged with its traceback and the
    loop goes on: a background loop never dies silently."""
    if not first:
        await asyncio.sleep(interval_s)
    while True:
        try:
            step()
        except Exception:  # any defect: logged and retried next time, never a silently dead task
            log.exception(_event(event="background_step_failed", task=name))
        await asyncio.sleep(interval_s)


def save_or_log(path: Path, learner: Learner, router: Router | None = None) -> bool:
    """`save`, with any failure logged (a full disk, or a defect): the caller goes on either way."""
    try:
        save(path, learner, router)
    except Exception as exc:  # the final save runs in shutdown: whatever went wrong is logged, not raised
        log.warning(_event(event="state_not_saved", path=str(path), why=f"{type(exc).__name__}: {exc}"[:500]))
        return False
    return True


async def save_periodically(settings: Settings, learner: Learner, router: Router | None = None) -> None:
    path = settings.state_file
    assert path is not None
    await every(settings.state_save_interval_s, "state-save", lambda: save_or_log(path, learner, router))
