"""Learned state that survives restarts: a state file, and a warm start from a running peer.

The file (`SPECGATE_STATE_FILE`) is written every `SPECGATE_STATE_SAVE_INTERVAL_S` and on shutdown, atomically
(a temporary file renamed over the old one), and read at start. A missing, corrupt, foreign or other-version
file is logged and ignored: the gateway starts from its priors, never crashes. Without a usable file, a new
replica asks each of `SPECGATE_PEERS` in turn for `GET /admin/learner` (with `SPECGATE_ADMIN_API_KEY`). Every
imported estimate's weight is capped at `SPECGATE_STATE_MAX_WEIGHT` observations, and estimates keep decaying:
a warm start is a prior, not a lock-in.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import tempfile
import time
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


def load_document(learner: Learner, document: object, max_weight: float, source: str,
                  router: Router | None = None) -> bool:
    """Import a state document; log and return False if it is not one of ours."""
    try:
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise ValueError("not a specgate learner state")
        import_state(learner, document["learner"], max_weight)
    except (ValueError, KeyError, TypeError) as exc:
        log.warning(_event(event="state_ignored", source=source, why=str(exc)))
        return False
    regimes = document.get("regimes")
    if router is not None and isinstance(regimes, dict):
        router.import_regimes(regimes)
    log.info(_event(event="state_loaded", source=source))
    return True


def load_file(path: Path, learner: Learner, max_weight: float, router: Router | None = None) -> bool:
    try:
        document = json.loads(path.read_bytes())
    except FileNotFoundError:
        log.info(_event(event="state_missing", path=str(path)))
        return False
    except (OSError, ValueError) as exc:
        log.warning(_event(event="state_ignored", source=str(path), why=f"unreadable: {exc}"))
        return False
    return load_document(learner, document, max_weight, str(path), router)


async def warm_start_from_peers(session: aiohttp.ClientSession, settings: Settings, learner: Learner,
                                router: Router | None = None) -> bool:
    headers = {}
    if settings.admin_api_key is not None:
        headers["Authorization"] = "Bearer " + settings.admin_api_key.get_secret_value()
    for peer in settings.peers:
        try:
            async with session.get(peer.rstrip("/") + "/admin/learner", headers=headers, allow_redirects=False,
                                   timeout=aiohttp.ClientTimeout(total=3.0)) as r:
                if r.status != 200:
                    raise ValueError(f"status {r.status}")
                document = orjson.loads(await r.read())
        except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as exc:
            log.warning(_event(event="peer_unavailable", peer=peer, why=str(exc) or type(exc).__name__))
            continue
        if load_document(learner, document, settings.state_max_weight, peer, router):
            return True
    return False


async def restore(session: aiohttp.ClientSession, settings: Settings, learner: Learner,
                  router: Router | None = None) -> None:
    """At start: the state file, else a peer."""
    if settings.state_file is not None and load_file(settings.state_file, learner, settings.state_max_weight,
                                                     router):
        return
    if settings.peers:
        await warm_start_from_peers(session, settings, learner, router)


async def save_periodically(settings: Settings, learner: Learner, router: Router | None = None) -> None:
    assert settings.state_file is not None
    while True:
        await asyncio.sleep(settings.state_save_interval_s)
        try:
            save(settings.state_file, learner, router)
        except OSError as exc:
            log.warning(_event(event="state_not_saved", path=str(settings.state_file), why=str(exc)))
