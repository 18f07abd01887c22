"""Prometheus text read through the one parser (`prometheus_client.parser`): samples, and sums over them."""

from __future__ import annotations

from collections.abc import Iterable

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

Sample = tuple[str, dict[str, str], float]


def parse_text(text: str) -> list[Sample]:
    return [(s.name, dict(s.labels), float(s.value)) for fam in text_string_to_metric_families(text)
            for s in fam.samples]


def sample_sum(samples: Iterable[Sample], name: str, **match: str) -> float:
    """Sum of the samples of `name` whose labels include `match`."""
    return sum(v for n, labels, v in samples if n == name and all(labels.get(k) == x for k, x in match.items()))


def metric_sum(text: str, name: str, **match: str) -> float:
    """`sample_sum` over an exposition text."""
    return sample_sum(parse_text(text), name, **match)


async def scrape_sum(url: str, name: str, **match: str) -> float:
    """`metric_sum` over a live `GET {url}/metrics`."""
    async with aiohttp.ClientSession() as session, session.get(url + "/metrics") as resp:
        resp.raise_for_status()
        return metric_sum(await resp.text(), name, **match)
