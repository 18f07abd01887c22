"""Learned state that lasts: the learner's estimates in a versioned JSON file (`SPECGATE_STATE_FILE`), read at
start and written periodically and on shutdown; without a usable file, a warm start from the first peer
gateway that answers (`SPECGATE_PEERS`, its `GET /admin/state?export=1`, with the admin key).

Whatever comes in is a prior, not a lock-in (`Learner.import_state` caps each estimate's weight). A missing,
corrupt, foreign or other-version file, or a peer that fails, is logged and ignored: the gateway starts from
its priors as it always did. Writes are atomic (a temporary file in the same directory, then rename), so a
crash or a second worker writing at the same time never leaves a half-written file.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from gateway.learner import Learner
from gateway.settings import Settings
from gateway.state import AppState

log = logging.getLogger("specgate.persist")
FORMAT = "specgate-learner-state"
VERSION = 1
EXPORT_PATH = "/admin/state?export=1"
MAX_STATE_BYTES = 8 * 1024 * 1024


class StateError(ValueError):
    """A state document that cannot be used (foreign, another version, malformed)."""


def envelope(learner: Learner) -> dict[str, Any]:
    """The versioned document written to the file and served to peers."""
    return {"format": FORMAT, "version": VERSION, "written_at": time.time(), "pid": os.getpid(),
            "learner": learner.export_state()}


def apply(doc: object, learner: Learner, max_weight: float | None) -> None:
    """Import `doc` (an `envelope`) into `learner`, or raise StateError and change nothing."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise StateError("not a specgate learner state (foreign file)")
    if doc.get("version") != VERSION:
        raise StateError(f"state format version {doc.get('version')!r}, this gateway reads {VERSION}")
    inner = doc.get("learner")
    if not isinstance(inner, dict):
        raise StateError("state has no learner table")
    try:
        learner.import_state(inner, max_weight)
    except (ValueError, TypeError) as exc:
        raise StateError(str(exc)) from None


def write_file(path: Path, doc: dict[str, Any]) -> None:
    """Atomically replace `path` with `doc` as JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def load_file(path: Path, learner: Learner, max_weight: float | None) -> bool:
    """Import the state file; False (logged) when it is missing or unusable."""
    try:
        if path.stat().st_size > MAX_STATE_BYTES:
            raise StateError(f"state file larger than {MAX_STATE_BYTES} bytes")
        apply(json.loads(path.read_bytes()), learner, max_weight)
    except FileNotFoundError:
        _log("info", "state_file_missing", path=str(path))
        return False
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, StateError) as exc:
        _log("warning", "state_file_ignored", path=str(path), error=f"{type(exc).__name__}: {exc}")
        return False
    _log("info", "state_loaded", source=str(path))
    return True


async def load_peer(settings: Settings, learner: Learner) -> str | None:
    """Warm-start from the first peer that answers with a usable state; its URL, or None."""
    headers = {}
    if settings.admin_api_key is not None:
        headers["Authorization"] = f"Bearer {settings.admin_api_key.get_secret_value()}"
    timeout = aiohttp.ClientTimeout(total=settings.peer_timeout_s)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        for peer in settings.peers:
            try:
                async with session.get(peer + EXPORT_PATH, headers=headers) as resp:
                    if resp.status != 200:
                        raise StateError(f"peer answered {resp.status}")
                    body = await resp.content.read(MAX_STATE_BYTES + 1)
                if len(body) > MAX_STATE_BYTES:
                    raise StateError(f"peer state larger than {MAX_STATE_BYTES} bytes")
                apply(json.loads(body), learner, settings.state_import_weight)
            except (aiohttp.ClientError, OSError, TimeoutError, UnicodeDecodeError, json.JSONDecodeError,
                    StateError) as exc:
                _log("warning", "peer_ignored", peer=peer, error=f"{type(exc).__name__}: {exc}")
                continue
            _log("info", "state_loaded", source=peer)
            return peer
    return None


def save(settings: Settings, learner: Learner) -> None:
    if settings.state_file is None:
        return
    try:
        write_file(settings.state_file, envelope(learner))
    except OSError as exc:  # a full disk or a read-only mount must not take the gateway down
        _log("warning", "state_write_failed", path=str(settings.state_file), error=f"{type(exc).__name__}: {exc}")


async def persistence(app: web.Application) -> AsyncIterator[None]:
    """cleanup_ctx: load at start (file, else peers), write every `state_interval_s` and at shutdown."""
    state = app[AppState.key]
    settings, learner = state.settings, state.learner
    loaded = settings.state_file is not None and load_file(settings.state_file, learner,
                                                             settings.state_import_weight)
    if not loaded and settings.peers:
        await load_peer(settings, learner)
    task = asyncio.create_task(_write_loop(settings, learner), name="specgate-state") \
        if settings.state_file is not None else None
    yield
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    save(settings, learner)


async def _write_loop(settings: Settings, learner: Learner) -> None:
    assert settings.state_file is not None
    while True:
        await asyncio.sleep(settings.state_interval_s)
        doc = envelope(learner)  # read on the loop; the write and fsync happen off it
        try:
            await asyncio.to_thread(write_file, settings.state_file, doc)
        except OSError as exc:
            _log("warning", "state_write_failed", path=str(settings.state_file), error=f"{type(exc).__name__}: {exc}")


def _log(level: str, event: str, **fields: object) -> None:
    getattr(log, level)(json.dumps({"event": event, **fields}))
