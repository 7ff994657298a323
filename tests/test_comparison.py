from __future__ import annotations

from typing import Any

import pytest

from streamproof.harness.comparison import MISSING, Divergence, best_alternative, compare


def first(expected: Any, actual: Any) -> str:
    found = compare(expected, actual)
    return str(found[0]) if found else ""


def test_only_listed_keys_are_compared() -> None:
    actual = {"status": "complete", "usage": {"prompt_tokens": 1, "total_tokens": 3}, "x": 1}
    assert compare({"usage": {"prompt_tokens": 1}}, actual) == []


def test_first_divergence_names_the_path() -> None:
    actual = {"choices": [{"content": "a"}]}
    assert first({"choices": [{"content": "a\nb"}]}, actual) == (
        "choices[0].content: want 'a\\nb', got 'a'"
    )


def test_lists_must_have_the_same_length() -> None:
    found = compare({"choices": [{}, {}]}, {"choices": [{}]})
    assert found == [Divergence("choices.length", 2, 1)]


def test_missing_key_is_a_divergence() -> None:
    assert compare({"usage": None}, {}) == [Divergence("usage", None, MISSING)]


@pytest.mark.parametrize("actual", [None, "", MISSING])
def test_text_fields_treat_null_and_missing_as_empty(actual: Any) -> None:
    choice = {} if actual is MISSING else {"content": actual, "refusal": actual}
    assert compare({"choices": [{"content": "", "refusal": None}]}, {"choices": [choice]}) == []


def test_null_is_not_empty_outside_text_fields() -> None:
    assert compare({"finish_reason": None}, {"finish_reason": ""}) != []


def test_error_message_is_a_substring_match() -> None:
    expected = {"error": {"message": "rate limit", "http_status": 429}}
    assert (
        compare(expected, {"error": {"message": "You hit a rate limit.", "http_status": 429}}) == []
    )
    found = compare(expected, {"error": {"message": "nope", "http_status": 429}})
    assert str(found[0]) == "error.message: want contains 'rate limit', got 'nope'"


def test_booleans_are_not_numbers() -> None:
    assert compare({"n": 1}, {"n": True}) != []
    assert compare({"n": 1}, {"n": 1.0}) == []


def test_type_mismatch_of_containers() -> None:
    assert compare({"usage": {"a": 1}}, {"usage": None}) != []
    assert compare({"choices": []}, {"choices": None}) != []


def test_best_alternative_passes_when_any_matches() -> None:
    alternatives = [{"status": "truncated"}, {"status": "complete"}]
    assert best_alternative(alternatives, {"status": "complete"}) == []


def test_best_alternative_reports_the_closest() -> None:
    alternatives = [
        {"status": "truncated", "choices": [{"content": "x"}]},
        {"status": "complete", "choices": [{"content": "a"}]},
    ]
    found = best_alternative(alternatives, {"status": "complete", "choices": [{"content": "b"}]})
    assert [d.path for d in found] == ["choices[0].content"]


def test_as_dict_reports_missing_as_null() -> None:
    assert Divergence("usage", 1, MISSING).as_dict() == {
        "field": "usage",
        "expected": 1,
        "actual": None,
    }
