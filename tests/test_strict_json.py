"""Strict JSON everywhere: outcomes, protocol replies, the files a run writes, verify."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from commands import streamproof

from streamproof.corpus import load_corpus
from streamproof.harness.engine import Engine, Verdict
from streamproof.harness.strict_json import NotStrictJSON, first_problem, loads
from streamproof.reporting.results import write_baseline
from streamproof.reporting.verify import verify

ADAPTERS = Path(__file__).parent / "adapters"
CASE = "generic/finish-without-done"
BY_ID = {c.id: c for c in load_corpus().cases}


def strict(text: str) -> Any:
    """A parser that knows no NaN or Infinity, as in any language but Python's json."""

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in a file streamproof wrote")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (
            {"choices": [{"usage": {"total_tokens": math.nan}}]},
            "choices[0].usage.total_tokens is NaN",
        ),
        ({"usage": {"prompt_tokens": -math.inf}}, "usage.prompt_tokens is -Infinity"),
        ([1, 2, math.inf], "[2] is Infinity"),
        (math.nan, "the outcome is NaN"),
        ({"choices": [{1: "a"}]}, "choices[0] has a key that is not a string: 1"),
        ({None: 1}, "the outcome has a key that is not a string: None"),
        ({"a b": {"x-y": [math.nan]}}, '["a b"]["x-y"][0] is NaN'),
        ({"status": "complete", "usage": {"total_tokens": 3}, "x": [1.5, None, True]}, None),
    ],
)
def test_first_problem_names_the_path(value: Any, problem: str | None) -> None:
    assert first_problem(value) == problem


def test_first_problem_survives_a_circular_and_a_deep_value() -> None:
    looped: dict[str, Any] = {"a": 1}
    looped["self"] = looped
    assert first_problem(looped) is None  # json.dumps refuses it; the walk must just end
    deep: list[Any] = [math.nan]
    for _ in range(5000):
        deep = [deep]
    assert first_problem(deep) is not None and first_problem(deep).endswith("[0] is NaN")  # type: ignore[union-attr]


def test_loads_refuses_every_non_standard_constant() -> None:
    for text in ('{"a": NaN}', "[Infinity]", '{"s": -Infinity}'):
        with pytest.raises(NotStrictJSON):
            loads(text)
    assert loads('{"a": 1.5, "b": "NaN"}') == {"a": 1.5, "b": "NaN"}


def test_a_nan_outcome_is_a_crash_naming_its_path_and_the_file_is_strict(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    baseline = tmp_path / "baseline.json"
    proc = streamproof(
        "run",
        "--adapter",
        ADAPTERS / "returns_nan.py",
        "--case",
        CASE,
        "--transport",
        "whole,lines,bytes",
        "--json",
        out,
        "--baseline",
        baseline,
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    document = strict(out.read_text(encoding="utf-8"))
    strict(baseline.read_text(encoding="utf-8"))
    by_transport = {r["transport"]: r for r in document["results"]}
    assert {r["verdict"] for r in by_transport.values()} == {"crash"}
    assert by_transport["whole"]["message"] == (
        "outcome is not strict JSON: usage.total_tokens is NaN"
    )
    assert by_transport["lines"]["message"] == (
        "outcome is not strict JSON: choices[0] has a key that is not a string: 7"
    )
    assert by_transport["bytes"]["message"] == (
        "outcome is not strict JSON: usage.prompt_tokens is -Infinity"
    )
    assert "CRASH   generic/finish-without-done [whole] (must): outcome is not strict JSON" in (
        proc.stdout
    )
    assert verify(out) == []


def test_a_cmd_adapter_replying_nan_is_a_crash() -> None:
    engine = Engine(f"cmd:{sys.executable} {ADAPTERS / 'nan_protocol.py'}")
    try:
        result = engine.run(BY_ID[CASE], "whole")
        again = engine.run(BY_ID[CASE], "bytes")
    finally:
        engine.close()
    for one in (result, again):  # the adapter is restarted and the run goes on
        assert one.verdict is Verdict.CRASH
        assert one.message.startswith("protocol: reply is not strict JSON: NaN is not JSON")


def test_a_non_json_outcome_still_fails_as_before(tmp_path: Path) -> None:
    engine = Engine(str(ADAPTERS / "not_json.py"))
    try:
        result = engine.run(BY_ID[CASE], "whole")
    finally:
        engine.close()
    assert result.verdict is Verdict.FAIL and "not JSON" in result.message


@pytest.fixture(scope="module")
def results_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("strict")
    out = folder / "results.json"
    proc = streamproof(
        "run", "--case", "generic/*", "--transport", "whole", "--json", out, cwd=folder
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.mark.parametrize("constant", ["Infinity", "NaN", "-Infinity"])
def test_verify_rejects_a_non_standard_constant(
    results_file: Path, tmp_path: Path, constant: str
) -> None:
    text = results_file.read_text(encoding="utf-8")
    assert strict(text) and '"seconds": ' in text
    head, _, rest = text.partition('"seconds": ')
    number, _, tail = rest.partition("\n")
    edited = tmp_path / "edited.json"
    edited.write_text(f'{head}"seconds": {constant}{"," if number.endswith(",") else ""}\n{tail}')
    assert json.loads(edited.read_text())  # Python's own json would take it
    problems = verify(edited)
    assert len(problems) == 1 and f"not valid JSON: {constant} is not JSON" in problems[0], problems
    badge = tmp_path / "badge.json"
    proc = streamproof("verify", edited, "--badge", badge)
    assert proc.returncode == 1 and not badge.exists()
    assert "is not JSON (RFC 8259 has no NaN or Infinity)" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_no_file_writer_lets_nan_through(tmp_path: Path) -> None:
    document = {"adapter": {"name": "a", "version": "1"}, "results": [{"seconds": math.nan}]}
    with pytest.raises(ValueError, match="Out of range float"):
        write_baseline(document, tmp_path / "baseline.json")
    assert not (tmp_path / "baseline.json").exists()
