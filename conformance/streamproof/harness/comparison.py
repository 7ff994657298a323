"""The comparison rules (docs/semantics.md §12); the one place they live.

Every tool that compares an outcome with an expectation (``run``, the pytest
plugin, ``record``, ``diff`` and anything a user writes) calls this module, so
the rules and the conventions of §12.5 are the same everywhere::

    from streamproof.comparison import best_alternative, compare

    found = best_alternative(case.alternatives, outcome)  # [] when it passes
    found = compare(case.data["expected"], outcome)       # one expectation
    print(found[0] if found else "pass")                  # the first divergence

``compare(expected, actual)`` returns every divergence in document order;
the first one is what a report shows. A key the outcome lacks is
``MISSING`` and prints as ``<absent>``, never as ``null`` (§12.4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "MISSING",
    "Divergence",
    "best_alternative",
    "compare",
    "finish_error_tolerated",
    "render",
]

# Text fields where null, a missing key and "" mean the same (semantics §12.3).
_TEXT_FIELDS = frozenset({"content", "reasoning", "refusal"})
# Parts of a choice that a response may leave out (semantics §12.3): an absent
# key is null for the objects, and null or absent is the empty list for the list.
_OPTIONAL_OBJECTS = frozenset({"function_call", "audio", "logprobs"})
_OPTIONAL_LISTS = frozenset({"annotations"})
# Keys of ``error`` whose expected null also matches an absent key (§12.5.3).
_ERROR_DETAILS = frozenset({"type", "code"})


class _Missing:
    def __repr__(self) -> str:
        return "<absent>"


MISSING: Any = _Missing()


def render(value: Any) -> str:
    """A value as a divergence shows it: JSON's null/true/false, strings quoted
    as Python does (so ``\\n`` stays visible), an absent key as ``<absent>``."""
    if value is MISSING:
        return "<absent>"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{render(k)}: {render(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(render(v) for v in value) + "]"
    return repr(value)


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where an outcome differs from the expectation."""

    path: str
    expected: Any
    actual: Any
    rule: str = "equal"

    def __str__(self) -> str:
        want = render(self.expected)
        if self.rule == "contains":
            want = f"contains {want}"
        return f"{self.path or '(outcome)'}: want {want}, got {render(self.actual)}"

    def as_dict(self) -> dict[str, Any]:
        """The JSON form: an absent actual value is ``"actual": null`` with
        ``"actual_absent": true`` (readers that predate the flag see null)."""
        data: dict[str, Any] = {"field": self.path, "expected": self.expected}
        if self.actual is MISSING:
            data["actual"] = None
            data["actual_absent"] = True
        else:
            data["actual"] = self.actual
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Divergence:
        """The divergence ``as_dict`` wrote (a results file's ``mismatches``)."""
        actual = MISSING if data.get("actual_absent") else data.get("actual")
        return cls(data["field"], data["expected"], actual)


def compare(expected: Any, actual: Any, path: str = "") -> list[Divergence]:
    """Every divergence of ``actual`` from the subset ``expected``.

    The conventions of semantics §12.5 apply; a divergence they forgive is
    not reported.
    """
    if not path and finish_error_tolerated(expected, actual):
        # §12.5.4: the error was signalled only by finish_reason "error", and
        # the outcome reports that finish reason; "complete" is accepted.
        expected = {**expected, "status": "complete"}
    return _compare(expected, actual, path)


def _compare(expected: Any, actual: Any, path: str) -> list[Divergence]:
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [Divergence(path, expected, actual)]
        found: list[Divergence] = []
        for key, want in expected.items():
            sub = f"{path}.{key}" if path else key
            got = actual.get(key, MISSING)
            if key in _TEXT_FIELDS:
                want = "" if want is None else want
                got = "" if got is None or got is MISSING else got
            elif _is_choice(path) and key in _OPTIONAL_OBJECTS:
                got = None if got is MISSING else got
            elif _is_choice(path) and key in _OPTIONAL_LISTS:
                want = [] if want is None else want
                got = [] if got is None or got is MISSING else got
            if want is None and _convention_accepts(path, key, got):
                continue
            if key == "message" and path.endswith("error") and isinstance(want, str):
                if not (isinstance(got, str) and want in got):
                    found.append(Divergence(sub, want, got, rule="contains"))
                continue
            found.extend(_compare(want, got, sub))
        return found
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [Divergence(path, expected, actual)]
        if len(expected) != len(actual):
            return [Divergence(f"{path}.length", len(expected), len(actual))]
        found = []
        for i, (want, got) in enumerate(zip(expected, actual, strict=True)):
            found.extend(_compare(want, got, f"{path}[{i}]"))
        return found
    if _same_scalar(expected, actual):
        return []
    return [Divergence(path, expected, actual)]


def _is_choice(path: str) -> bool:
    """Whether ``path`` is one choice of the outcome (``choices[0]``)."""
    return path.startswith("choices[") and "." not in path


def _convention_accepts(path: str, key: str, got: Any) -> bool:
    """Whether an expected ``null`` at ``path.key`` accepts ``got`` (§12.5.1 to §12.5.3)."""
    if key == "finish_reason" and path.startswith("choices["):
        return isinstance(got, str) and not got  # §12.5.1: "" is no finish reason, passed through
    if key == "id" and not path:
        return isinstance(got, str) and not got  # §12.5.2: no chunk had a non-empty id, "" as sent
    if key in _ERROR_DETAILS and path == "error":
        return got is MISSING  # §12.5.3: no type or code, key left out
    return False


def finish_error_tolerated(expected: Any, actual: Any) -> bool:
    """§12.5.4: does the expectation signal its error only by finish_reason
    "error", and does ``actual`` report it as a complete answer with that
    finish reason on every choice the expectation says errored?

    The expectation tells: status "error", a choice expected to finish with
    "error", and no ``error`` object stated. A case whose body carries any
    other error signal (an HTTP error status, an ``error`` object or event)
    states ``error`` (§8.1, §8.2, §8.5), so the tolerance never reaches it;
    ``tests/test_comparison.py`` checks that against the corpus.
    """
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return False
    if expected.get("status") != "error" or "error" in expected:
        return False
    if actual.get("status") != "complete":
        return False
    want_choices = expected.get("choices")
    got_choices = actual.get("choices")
    if not isinstance(want_choices, list) or not isinstance(got_choices, list):
        return False
    errored = [
        i
        for i, choice in enumerate(want_choices)
        if isinstance(choice, dict) and choice.get("finish_reason") == "error"
    ]
    return bool(errored) and all(
        i < len(got_choices)
        and isinstance(got_choices[i], dict)
        and got_choices[i].get("finish_reason") == "error"
        for i in errored
    )


def _same_scalar(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return expected == actual
    return type(expected) is type(actual) and bool(expected == actual)


def best_alternative(alternatives: list[Any], actual: Any) -> list[Divergence]:
    """The divergences from the closest of several acceptable expectations.

    Empty when any alternative matches. The conventions of §12.5 apply to
    each alternative.
    """
    best: list[Divergence] | None = None
    for want in alternatives:
        found = compare(want, actual)
        if not found:
            return []
        if best is None or len(found) < len(best):
            best = found
    return best or []
