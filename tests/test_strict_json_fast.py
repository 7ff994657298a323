"""The strict-JSON check's fast path finds a problem exactly when the path-naming walk does."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from streamproof.harness import strict_json

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4)
keys = st.text(max_size=3) | st.integers() | st.booleans() | st.none() | st.floats()
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(keys, inner, max_size=4)
    ),
    max_leaves=20,
)


def _walk_problem(value: Any) -> str | None:
    """first_problem with its fast path turned off."""
    real = strict_json._all_strict
    strict_json._all_strict = lambda _: False  # type: ignore[assignment]
    try:
        return strict_json.first_problem(value)
    finally:
        strict_json._all_strict = real  # type: ignore[assignment]


@given(values)
def test_the_fast_path_agrees_with_the_walk(value: Any) -> None:
    assert strict_json.first_problem(value) == _walk_problem(value)
    if strict_json._all_strict(value):
        assert _walk_problem(value) is None


def test_the_fast_path_sees_deep_problems() -> None:
    assert not strict_json._all_strict({"a": [{"b": (1, float("nan"))}]})
    assert not strict_json._all_strict({"a": [{1: "x"}]})
    assert strict_json._all_strict({"a": [{"b": (1, 2.5, "x", None, True)}]})
    looped: list[Any] = []
    looped.append(looped)
    assert strict_json._all_strict(looped)
