"""Settings reject unknown enum-like values at start and build every core config."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gateway.settings import Settings


@pytest.mark.parametrize("bad", [{"policy": "fastest"}, {"rules_speculative_classes": ["poetry"]},
                                 {"log_level": "loud"}, {"backends": ["drafter=http://x"]}])
def test_unknown_names_are_rejected_at_start(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Settings(**bad)  # type: ignore[arg-type]


def test_every_core_config_comes_from_settings() -> None:
    s = Settings(forgetting=0.9, margin=0.2, regime_min_dwell_s=5.0, long_prompt_tokens=10, migration=False)
    assert s.learner_config().forgetting == 0.9
    assert s.adaptive_config().margin == 0.2
    assert s.regime_config().min_dwell_s == 5.0  # with live migration on: SPECGATE_REGIME_MIGRATION_DWELL_S
    assert Settings(regime_migration_dwell_s=7.0).regime_config().min_dwell_s == 7.0
    assert s.classifier_config().long_prompt_tokens == 10
    assert s.rules_config().speculative_classes == tuple(s.rules_speculative_classes)


@pytest.mark.parametrize("env", [{"SPECGATE_ADMIN_API_KEY": ""}, {"SPECGATE_ADMIN_API_KEY": "   "},
                                 {"SPECGATE_UPSTREAM_API_KEY": " \t"}, {"SPECGATE_API_KEYS": " , "}])
def test_blank_keys_are_refused_at_start(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35, item 9: a blank SPECGATE_ADMIN_API_KEY was accepted silently (admin endpoints open with no key,
    or the client key opened them)."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError, match="blank"):
        Settings()


@pytest.mark.parametrize("bad", [{"admin_api_key": " "}, {"upstream_api_key": ""}, {"api_keys": ["k", " "]}])
def test_blank_keys_given_directly_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError, match="blank"):
        Settings(**bad)  # type: ignore[arg-type]
    assert Settings(admin_api_key="adm", upstream_api_key="up", api_keys=["k"]).admin_api_key is not None
