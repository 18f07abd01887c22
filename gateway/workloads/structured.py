"""Structured-output tasks: JSON mode extraction from real e-mails, JSON-schema descriptions of real
standard-library functions, and change-log entries extracted to a JSON array."""

from __future__ import annotations

import email
import json
import random
from email import policy as email_policy
from typing import Any

from gateway.workloads.corpus import Corpus, FunctionSource
from gateway.workloads.task import Task, chat_body

_EXTRACT_SYSTEM = "You are an information extraction service. Reply with a single JSON object and nothing else."
_SIGNATURE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "module": {"type": "string"},
        "summary": {"type": "string"},
        "parameters": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "default": {"type": ["string", "null"]},
                    "kind": {
                        "type": "string",
                        "enum": ["positional_only", "positional_or_keyword", "var_positional", "keyword_only",
                                 "var_keyword"],
                    },
                },
                "required": ["name", "default", "kind"],
                "additionalProperties": False,
            },
        },
        "returns": {"type": ["string", "null"]},
        "raises": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "module", "summary", "parameters", "returns", "raises"],
    "additionalProperties": False,
}


def _header(msg: email.message.Message, name: str) -> str | None:
    value = msg.get(name)
    return None if value is None else " ".join(str(value).split())


def email_fields(raw: str) -> dict[str, Any]:
    """What a careful model extracts from an e-mail's headers (the reference answer)."""
    msg = email.message_from_string(raw, policy=email_policy.compat32)
    recipients = [addr.strip() for addr in (_header(msg, "To") or "").split(",") if addr.strip()]
    cc = [addr.strip() for addr in (_header(msg, "Cc") or "").split(",") if addr.strip()]
    parts = [part.get_content_type() for part in msg.walk()] if msg.is_multipart() else []
    return {
        "from": _header(msg, "From"),
        "to": recipients,
        "cc": cc,
        "subject": _header(msg, "Subject"),
        "date": _header(msg, "Date"),
        "message_id": _header(msg, "Message-ID"),
        "content_type": msg.get_content_type(),
        "attachments": sum(1 for p in parts[1:] if not p.startswith(("text/", "multipart/"))),
    }


def email_json(corpus: Corpus, rng: random.Random) -> Task | None:
    if not corpus.emails:
        return None
    raw = rng.choice(corpus.emails)
    reference = json.dumps(email_fields(raw), indent=2 if rng.random() < 0.5 else None, ensure_ascii=False)
    user = (
        "Extract the sender, the recipients (to, cc), the subject, the date, the Message-ID, the top-level content "
        "type and the number of non-text attachments from this e-mail. Use the keys from, to, cc, subject, date, "
        f"message_id, content_type, attachments; use null for missing headers.\n\n{raw[:4000]}"
    )
    messages = [{"role": "system", "content": _EXTRACT_SYSTEM}, {"role": "user", "content": user}]
    body = chat_body(messages, reference, rng.choice([0.0, 0.0, 0.2]), response_format={"type": "json_object"})
    return Task("json_object", "/v1/chat/completions", body, reference)


def signature_fields(fn: FunctionSource) -> dict[str, Any]:
    return {
        "name": fn.name,
        "module": fn.module,
        "summary": fn.summary,
        "parameters": [{"name": n, "default": d, "kind": k} for n, d, k in fn.params],
        "returns": fn.returns,
        "raises": list(fn.raises),
    }


def function_schema(corpus: Corpus, rng: random.Random) -> Task:
    fn = rng.choice(corpus.functions)
    reference = json.dumps(signature_fields(fn), ensure_ascii=False)
    user = (
        f"Describe the signature of this function from the `{fn.module}` module: its parameters with their "
        "defaults (as source text) and kinds, the return annotation, the exceptions it raises, and the first "
        f"paragraph of its docstring as the summary.\n\n```python\n{fn.source}\n```"
    )
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": "function_signature", "schema": _SIGNATURE_SCHEMA, "strict": True},
    }
    body = chat_body([{"role": "user", "content": user}], reference, 0.0, response_format=response_format)
    return Task("json_schema", "/v1/chat/completions", body, reference)


def news_json(corpus: Corpus, rng: random.Random) -> Task | None:
    entries = corpus.news
    if len(entries) < 12:
        return None
    count = rng.randint(4, 10)
    start = rng.randrange(0, len(entries) - count)
    chosen = entries[start : start + count]
    text = "\n\n".join(f"{e.issue}: {e.text}" for e in chosen)
    records = [{"issue": e.issue, "summary": e.text.split(". ")[0].rstrip(".") + "."} for e in chosen]
    reference = json.dumps({"changes": records}, indent=2, ensure_ascii=False)
    user = (
        "Below are entries from IDLE's change log. Extract every change as JSON: an object with a key "
        '"changes" holding a list of {"issue": ..., "summary": ...}, where summary is the first sentence of the '
        f"entry, copied exactly.\n\n{text}"
    )
    extra = {"response_format": {"type": "json_object"}} if rng.random() < 0.6 else {}
    body = chat_body([{"role": "user", "content": user}], reference, rng.choice([0.0, 0.1]), **extra)
    return Task("extraction_json", "/v1/chat/completions", body, reference)
