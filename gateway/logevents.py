"""Log lines as JSON objects: the event and its fields encoded by orjson, so no value (a client's path or
request id, an upstream's error text) can break the line or forge a field."""

from __future__ import annotations

import logging

import orjson


def event_line(event: str, **fields: object) -> str:
    return orjson.dumps({"event": event, **fields}, option=orjson.OPT_NON_STR_KEYS, default=str).decode()


def log_event(logger: logging.Logger, level: int, event: str, **fields: object) -> None:
    if logger.isEnabledFor(level):
        logger.log(level, event_line(event, **fields))
