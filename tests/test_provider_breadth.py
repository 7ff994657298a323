"""The provider report shows each provider's breadth, the same figures as corpus/README.md."""

from __future__ import annotations

from streamproof.corpus import load_corpus
from streamproof.corpus.breadth import SCENARIOS, breadth
from streamproof.reporting.providers import LEFT_OUT, provider_report

CORPUS = load_corpus()


def test_each_provider_row_carries_its_scenarios_shapes_and_evidence() -> None:
    report = provider_report(CORPUS)
    rows = {row["provider"]: row for row in report["providers"]}
    wides = [wide for wide in breadth(CORPUS.cases) if wide.provider not in LEFT_OUT]
    assert sorted(rows) == [wide.provider for wide in wides]
    for wide in wides:
        shown = rows[wide.provider]["breadth"]
        assert shown["scenarios"] == [s for s in SCENARIOS if s in wide.scenarios]
        assert shown["shapes"] == len(wide.shapes) >= 1
        assert shown["evidence"] == wide.evidence
    assert "generic" not in rows  # not a provider: not in the report's tables


def test_breadth_reads_scenarios_from_the_expectation() -> None:
    openai = next(row for row in breadth(CORPUS.cases) if row.provider == "openai")
    assert {"text", "tool call", "usage", "http error", "non-streamed"} <= openai.scenarios
    assert openai.cases == sum(1 for c in CORPUS.cases if c.provider == "openai")
