"""Hypothesis strategies for the pure routing core."""

from __future__ import annotations

from hypothesis import strategies as st

from gateway.core.classify import Features
from gateway.core.costmodel import StepModel


def features(**fixed: object) -> st.SearchStrategy[Features]:
    def build(**kw: object) -> Features:
        kw.update(fixed)
        return Features(**kw)  # type: ignore[arg-type]

    return st.builds(
        build,
        endpoint=st.sampled_from(["/v1/chat/completions", "/v1/completions"]),
        temperature=st.floats(0.0, 2.0),
        temperature_given=st.booleans(),
        top_p=st.floats(0.01, 1.0),
        prompt_tokens=st.integers(1, 20000),
        max_tokens=st.integers(1, 4096),
        max_tokens_given=st.booleans(),
        n=st.integers(1, 4),
        stream=st.booleans(),
        json_mode=st.booleans(),
        tools=st.booleans(),
        structured_fields=st.booleans(),
        json_cue=st.booleans(),
        sql_cue=st.booleans(),
        code_cue=st.booleans(),
        extraction_cue=st.booleans(),
        creative_cue=st.booleans(),
    )


step_models = st.builds(
    StepModel,
    base_s=st.floats(0.001, 0.05),
    per_request_s=st.floats(0.0, 0.001),
)
