"""All tunables, read once from `SPECGATE_*` environment variables (pydantic-settings).

This is the only module that reads the environment. Tests and benchmarks pass values directly:
`Settings(baseline_urls=["http://127.0.0.1:8001"], policy="rules")`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

PolicyName = Literal["adaptive", "rules", "baseline", "speculative", "clairvoyant"]
UrlList = Annotated[list[str], NoDecode]
KeyList = Annotated[list[SecretStr], NoDecode]


def _split_csv(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class Settings(BaseSettings):
    """Every field is `SPECGATE_<FIELD>` in the environment (lists are comma-separated)."""

    model_config = SettingsConfigDict(env_prefix="SPECGATE_", frozen=True, extra="ignore")

    # --- listening and backends
    host: str = Field("127.0.0.1", description="listen address")
    port: int = Field(8000, description="listen port")
    workers: int = Field(1, ge=1, description="processes sharing the port (SO_REUSEPORT)")
    baseline_urls: UrlList = Field(["http://127.0.0.1:8001"], description="baseline vLLM base URLs, comma-separated")
    speculative_urls: UrlList = Field(["http://127.0.0.1:8002"], description="speculative vLLM base URLs, comma-separated")
    policy: PolicyName = Field("adaptive", description="adaptive | rules | baseline | speculative | clairvoyant")
    oracle_file: Path | None = Field(None, description="clairvoyant: {id: {tokens_per_step, output_tokens}}")

    # --- classification thresholds
    creative_temperature: float = Field(0.8, description="explicit temperature at or above which a request is `creative`")
    long_prompt_tokens: int = Field(3000, description="estimated prompt tokens at or above which a request is `long_context`")
    chars_per_token: float = Field(4.0, description="prompt-size estimate: characters per token")
    default_max_tokens: int = Field(256, description="output length assumed when the request gives no max_tokens (and the learner's prior)")

    # --- `rules` policy
    rules_max_temperature: float = Field(0.7, description="rules: speculative only at or below this temperature")
    rules_max_prompt_tokens: int = Field(2000, description="rules: speculative only for prompts up to this size")
    rules_max_inflight: int = Field(16, description="rules: speculative only while it has fewer requests in flight")
    rules_speculative_classes: UrlList = Field(["structured", "code", "extraction"], description="rules: classes sent to speculative")

    # --- `adaptive` policy, cost model and learner
    margin: float = Field(0.05, ge=0.0, description="speculative must be predicted this much faster")
    explore_rate: float = Field(0.03, ge=0.0, le=0.5, description="share of requests routed to the other backend")
    explore_max_regret: float = Field(1.3, ge=1.0, description="never explore when predicted this many times slower")
    explore_max_output_tokens: float = Field(128.0, ge=1.0, description="explore only with requests expected this short")
    explore_min_observations: int = Field(3, ge=0, description="a temperature bucket with fewer speculative observations is unmeasured")
    explore_unmeasured_max_regret: float = Field(1.5, ge=1.0, description="regret cap when exploring an unmeasured class")
    home_check: bool = Field(
        False, description="adaptive: speculative only if also cheaper with all current work on one server")
    explore_unmeasured_rate: float = Field(
        0.25, ge=0.0, le=1.0, description="probe rate for an unmeasured temperature bucket (one probe at a time)")
    random_seed: int | None = Field(None, description="seed of the exploration draws (for reproducible runs)")
    externality_weight: float = Field(1.0, ge=0.0, description="weight of the delay a request imposes on others")
    forgetting: float = Field(0.98, gt=0.5, le=1.0, description="per-observation decay of learned estimates")
    num_speculative_tokens: int = Field(4, ge=1, description="γ configured on the speculative server")
    prior_tokens_per_step: float = Field(1.2, description="prior mean acceptance length (tokens per speculative step); low: speculation must earn its traffic")
    prior_weight: float = Field(3.0, ge=0.0, description="prior strength, in observations")
    prior_step_s: float = Field(0.005, description="prior baseline step time at batch 1 (s)")
    prior_speculative_step_s: float = Field(0.0075, description="prior speculative step time at batch 1 (s)")
    prior_step_per_request_s: float = Field(0.00004, description="prior baseline step-time growth per running request (s)")
    prior_speculative_step_per_request_s: float = Field(0.00015, description="prior speculative step-time growth per running request (s)")
    prior_interference_baseline: float = Field(0.2, ge=0.0, le=1.2, description="prior share of a speculative step a baseline step waits for (H200: ~0.15-0.25)")
    prior_interference_speculative: float = Field(1.0, ge=0.0, le=1.2, description="prior share of a baseline step a speculative step waits for (H200: ~0-1.1)")
    prior_prefill_s_per_token: float = Field(0.00004, description="prior prefill time per prompt token (s)")

    # --- health, scraping, failover, ejection
    health_interval_s: float = Field(2.0, description="period of GET /health on each backend")
    scrape_interval_s: float = Field(2.0, description="period of GET /metrics on each backend")
    max_attempts: int = Field(3, ge=1)
    backoff_base_s: float = Field(0.02, description="first retry backoff, doubled each retry, ±50% jitter")
    eject_consecutive_failures: int = Field(3, ge=1)
    eject_base_cooldown_s: float = Field(5.0, description="first ejection cooldown (doubles on repeat)")
    eject_max_cooldown_s: float = Field(120.0, description="cap on the ejection cooldown")

    # --- timeouts and limits
    connect_timeout_s: float = Field(2.0, description="upstream TCP connect timeout")
    first_byte_timeout_s: float = Field(120.0, description="upstream time to first byte of a stream; base of the non-streamed timeout")
    nonstream_timeout_per_token_s: float = Field(
        0.25, ge=0.0, description="non-streamed answers: first-byte timeout + this × max_tokens (total timeout without max_tokens)")
    idle_timeout_s: float = Field(60.0, description="max gap between streamed chunks")
    total_timeout_s: float = Field(900.0, description="whole upstream request")
    max_body_bytes: int = Field(8 * 1024 * 1024, description="request body limit (413 above)")
    drain_timeout_s: float = Field(30.0, description="SIGTERM: time in-flight requests get to finish")
    max_connections_per_backend: int = Field(1024, description="upstream connection pool size per backend")
    header_timeout_s: float = Field(
        15.0, gt=0.0, description="client connection: time to send a complete request head (also the idle keep-alive limit)")
    body_timeout_s: float = Field(30.0, gt=0.0, description="client connection: time to send the request body (408 after)")
    max_client_connections: int = Field(4096, ge=1, description="open client connections per process; more are closed at once")
    max_response_bytes: int = Field(
        64 * 1024 * 1024, ge=1024, description="largest non-streamed upstream answer the gateway buffers (502 above)")
    offload_parse_bytes: int = Field(
        256 * 1024, ge=0, description="request bodies at least this large are parsed in a helper process (0: never)")

    # --- auth
    api_keys: KeyList = Field([], description="client API keys, comma-separated (auth off when unset; only blanks refuse to start)")
    api_keys_file: Path | None = Field(None, description="file with one client key per line")
    admin_api_key: SecretStr | None = Field(None, description="key for /admin/* (default: the client keys)")
    upstream_api_key: SecretStr | None = Field(None, description="key sent to the backends as Bearer")

    # --- logging
    log_level: str = Field("INFO", description="log level (JSON lines on stderr)")
    log_requests: bool = Field(True, description="one JSON line per request")

    _split = field_validator(
        "baseline_urls", "speculative_urls", "api_keys", "rules_speculative_classes", mode="before"
    )(_split_csv)

    @field_validator("api_keys", mode="before")
    @classmethod
    def _no_blank_keys(cls, value: Any) -> Any:
        if isinstance(value, str) and value and not value.replace(",", "").strip():
            raise ValueError("SPECGATE_API_KEYS is set but holds no key (only blanks): refusing to run without auth")
        return value

    @field_validator("baseline_urls", "speculative_urls")
    @classmethod
    def _strip_slash(cls, urls: list[str]) -> list[str]:
        return [u.rstrip("/") for u in urls]

    def client_keys(self) -> list[bytes]:
        """API keys from `api_keys` and `api_keys_file` (one per line, '#' comments)."""
        keys = [k.get_secret_value().encode() for k in self.api_keys]
        if self.api_keys_file is not None:
            for line in self.api_keys_file.read_text().splitlines():
                line = line.split("#", 1)[0].strip()
                if line:
                    keys.append(line.encode())
            if not keys:
                raise ValueError(f"{self.api_keys_file} holds no key (only blanks or comments): refusing to run without auth")
        return keys

    def redacted(self) -> dict[str, Any]:
        """Effective settings for `/admin/config`; secrets and URL credentials shown as `**********`."""
        out = self.model_dump(mode="json")
        for name in ("baseline_urls", "speculative_urls"):
            out[name] = [redact_url(u) for u in out[name]]
        return out


def redact_url(url: str) -> str:
    """`http://user:pw@host` -> `http://**********@host`: a URL fit to show."""
    scheme, sep, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    if not sep or "@" not in authority:
        return url
    return f"{scheme}://**********@{authority.rsplit('@', 1)[1]}{slash}{path}"
