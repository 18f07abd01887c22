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
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = Field(1, ge=1, description="processes sharing the port (SO_REUSEPORT)")
    baseline_urls: UrlList = ["http://127.0.0.1:8001"]
    speculative_urls: UrlList = ["http://127.0.0.1:8002"]
    policy: PolicyName = "adaptive"
    oracle_file: Path | None = Field(None, description="clairvoyant: {id: {tokens_per_step, output_tokens}}")

    # --- classification thresholds
    creative_temperature: float = 0.8
    long_prompt_tokens: int = 3000
    chars_per_token: float = 4.0
    default_max_tokens: int = 256

    # --- `rules` policy
    rules_max_temperature: float = 0.7
    rules_max_prompt_tokens: int = 2000
    rules_max_inflight: int = 16
    rules_speculative_classes: UrlList = ["structured", "code", "extraction"]

    # --- `adaptive` policy, cost model and learner
    margin: float = Field(0.05, ge=0.0, description="speculative must be predicted this much faster")
    explore_rate: float = Field(0.05, ge=0.0, le=0.5, description="share of requests routed to the other backend")
    explore_max_regret: float = Field(1.5, ge=1.0, description="never explore when predicted this many times slower")
    externality_weight: float = Field(0.5, ge=0.0, description="weight of the delay a request imposes on others")
    forgetting: float = Field(0.98, gt=0.5, le=1.0, description="per-observation decay of learned estimates")
    num_speculative_tokens: int = Field(4, ge=1, description="γ configured on the speculative server")
    prior_tokens_per_step: float = 2.0
    prior_weight: float = Field(3.0, ge=0.0, description="prior strength, in observations")
    prior_step_s: float = 0.005
    prior_speculative_step_s: float = 0.0075
    prior_step_per_request_s: float = 0.00004
    prior_speculative_step_per_request_s: float = 0.00015
    prior_interference_s: float = 0.003
    prior_prefill_s_per_token: float = 0.00004

    # --- health, scraping, failover, ejection
    health_interval_s: float = 2.0
    scrape_interval_s: float = 2.0
    max_attempts: int = Field(3, ge=1)
    backoff_base_s: float = 0.02
    eject_consecutive_failures: int = Field(3, ge=1)
    eject_base_cooldown_s: float = 5.0
    eject_max_cooldown_s: float = 120.0

    # --- timeouts and limits
    connect_timeout_s: float = 2.0
    first_byte_timeout_s: float = 120.0
    idle_timeout_s: float = 60.0
    total_timeout_s: float = 900.0
    max_body_bytes: int = 8 * 1024 * 1024
    drain_timeout_s: float = 30.0
    max_connections_per_backend: int = 1024

    # --- auth
    api_keys: KeyList = []
    api_keys_file: Path | None = None
    admin_api_key: SecretStr | None = None
    upstream_api_key: SecretStr | None = None

    # --- logging
    log_level: str = "INFO"
    log_requests: bool = True

    _split = field_validator(
        "baseline_urls", "speculative_urls", "api_keys", "rules_speculative_classes", mode="before"
    )(_split_csv)

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
        return keys

    def redacted(self) -> dict[str, Any]:
        """Effective settings for `/admin/config`; secrets shown as `**********`."""
        return self.model_dump(mode="json")
