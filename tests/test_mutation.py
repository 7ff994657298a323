"""A smoke test of scripts/mutation: a handful of mutants, a few cases.

The full run (every mutant, every case, five transports) is scripts/mutation,
run nightly; reports/mutation.md is its output.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import mutation_lib as lib  # noqa: E402
import mutation_report  # noqa: E402

CASES = [
    "generic/text-split-per-token",
    "generic/http-400-json",
    "generic/non-streamed-completion",
    "sse-spec/bom-at-start",
    "sse-spec/crlf-content-surfaces-per-event",
    "generic/finish-reason-error-after-text",
]


@pytest.fixture(scope="module")
def runs() -> list[lib.Run]:
    return lib.corpus_runs(("whole", "random:1", "bytes"), cases=CASES)


@pytest.fixture(scope="module")
def made() -> dict[str, lib.Mutant]:
    return {m.id: m for m in lib.mutants()}


def by_prefix(made: dict[str, lib.Mutant], prefix: str) -> lib.Mutant:
    return made[next(i for i in made if i.startswith(prefix))]


def test_ids_are_unique_and_every_operator_is_used(made: dict[str, lib.Mutant]) -> None:
    every = lib.mutants()
    assert len(made) == len(every) > 500
    operators = {m.operator for m in every}
    assert operators >= {
        "compare",
        "boolean",
        "arithmetic",
        "constant",
        "delete-statement",
        "return-value",
        "negate-condition",
    }


def test_every_mutated_function_is_mapped_to_a_semantics_section() -> None:
    functions = {f"{m.module}:{m.function}" for m in lib.mutants()}
    assert functions - set(lib.SECTIONS) == set()


def test_the_unmutated_parser_passes_every_run(runs: list[lib.Run]) -> None:
    reader = lib.load_reference()["reader"].ResponseReader
    assert [
        (r.case, r.transport, lib.verdict(reader, r)) for r in runs if lib.verdict(reader, r)
    ] == []
    assert any(r.incremental for r in runs) and not all(r.incremental for r in runs)


def test_loading_a_variant_leaves_the_package_alone() -> None:
    import streamproof.reference.reader as installed

    modules = lib.load_reference()
    assert modules["reader"] is not installed
    assert sys.modules["streamproof.reference.reader"] is installed


@pytest.mark.parametrize(
    ("prefix", "killer"),
    [
        ("reader.py:body_kind:compare:>=->>#", "generic/http-400-json"),
        ("sse.py:SSEDecoder._strip_bom:delete-statement:if candidate.startswith(_BOM):", None),
        ("chat.py:StreamAccumulator.take_events:negate-condition:reason == 'error'", None),
    ],
)
def test_a_mutant_is_killed_by_a_case(
    made: dict[str, lib.Mutant], runs: list[lib.Run], prefix: str, killer: str | None
) -> None:
    result = lib.check_mutant(by_prefix(made, prefix), runs)
    assert result.killed_by is not None, result
    if killer:
        assert result.killed_by.startswith(killer)


def test_a_mutant_no_chosen_case_reaches_survives(
    made: dict[str, lib.Mutant], runs: list[lib.Run]
) -> None:
    # The refusal rule: none of CASES carries a refusal, so nothing can notice.
    mutant = by_prefix(
        made,
        "chat.py:_other_fields:delete-statement:if isinstance(refusal, str)",
    )
    assert lib.check_mutant(mutant, runs).killed_by is None


def test_a_mutant_that_hangs_is_killed(
    monkeypatch: pytest.MonkeyPatch, runs: list[lib.Run]
) -> None:
    monkeypatch.setattr(lib, "RUN_SECONDS", 0.2)

    class Hangs:
        def __init__(self, *args: object) -> None:
            pass

        def feed(self, data: bytes) -> Iterator[object]:
            while True:
                pass

    assert lib.verdict(Hangs, runs[0]) == "hangs for more than 0.2s"


def test_the_diff_shows_the_change(made: dict[str, lib.Mutant]) -> None:
    code, diff = lib.mutated_source(by_prefix(made, "reader.py:body_kind:compare:>=->>#"))
    assert "-    if status >= 400:" in diff and "+    if status > 400:" in diff
    ast.parse(code)


def test_listed_equivalents_are_current_mutants(made: dict[str, lib.Mutant]) -> None:
    listed = mutation_report.read_equivalents()
    assert set(listed) - set(made) == set()
    assert all(len(argument) > 20 and "\n" not in argument for argument in listed.values())
