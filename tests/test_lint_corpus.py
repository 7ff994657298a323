"""``streamproof lint`` and the provider report.

The key property: lint of every case of the corpus reports exactly the
quirks its ``tags`` name (plus, for a stream, its provider's baselines),
restricted to the quirks lint can see from one body (``DETECTABLE``). Where
a provider's baseline cannot show in one of its bodies, the gap is listed
below with the reason, and the test checks the gap is exactly that, so a
fixed case makes its entry fail as stale instead of leaving it silently
behind.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from streamproof.checks.report import (
    DETECTABLE,
    LintReport,
    lint_case,
)
from streamproof.corpus import Case, load_corpus
from streamproof.corpus.quirks import load_quirks

CORPUS = load_corpus()
CATALOGUE, _ = load_quirks(CORPUS.root)
assert CATALOGUE is not None
CASES = {case.id: case for case in CORPUS.cases}


class Gap(NamedTuple):
    """Where a case's tags and its bytes disagree: tags to add, tags to remove, and why."""

    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    why: str = ""


#: Streamed cases whose tags (with their provider's baselines) and bytes disagree. Every
#: case's own tags now match its bytes; what is left is a baseline, a trait of all of a
#: provider's streams, that a particular body cannot show.
STREAM_GAPS: dict[str, Gap] = {
    "cerebras/direct-stream-done-usage-and-time-info-on-finish": Gap(
        remove=("no-done",),
        why="baseline not observable: a direct api.cerebras.ai stream (2026) ends with [DONE];"
        " the router streams of the baseline do not",
    ),
    "deepseek/stalls-mid-reasoning-with-keep-alives": Gap(
        remove=("usage-in-finish-chunk",),
        why="baseline not observable: the stream is cut off before its finish chunk",
    ),
    "mistral/finish-reason-error-mid-answer": Gap(
        remove=("usage-in-finish-chunk",),
        why="baseline not observable: this stream sends no usage at all",
    ),
    "openrouter/finish-reason-error-mid-stream": Gap(
        remove=("role-every-delta",),
        why="baseline not observable: the documented error event is the whole stream",
    ),
    "perplexity/usage-cost-complete-only-on-done-chunk": Gap(
        remove=("citations-every-chunk", "role-every-delta"),
        why="baselines not observable: no chunk of this capture carries citations, and its"
        " last delta, as the live fixture has it, carries no role",
    ),
    "qwen/deepseek-r1-data-without-space": Gap(
        remove=("key-order-varies",),
        why="baseline not observable: every chunk has the same key order",
    ),
    "tgi/stream-error-object-then-done": Gap(
        remove=("id-empty", "role-every-delta"),
        why="baselines not observable: the stream is one error object, no chunk",
    ),
    "together/2025-parallel-tool-calls-type-repeated-null-id-and-name": Gap(
        remove=("big-int-seed",),
        why="baseline not observable: Together's 2025 chunks carry no seed",
    ),
    "together/2025-tool-call-usage-chunk-with-warnings": Gap(
        remove=("big-int-seed",),
        why="baseline not observable: Together's 2025 chunks carry no seed",
    ),
    "together/2025-tool-calls-finish-then-stop-with-usage": Gap(
        remove=("big-int-seed",),
        why="baseline not observable: Together's 2025 chunks carry no seed",
    ),
}

#: Non-streamed and HTTP-error cases whose tags and bytes disagree (no baselines: those
#: are traits of streams). None since corpus 1.0.1; a new entry needs its reason.
BODY_GAPS: dict[str, Gap] = {}

#: Plain OpenAI streams: the reference itself, so nothing to report.
OPENAI_REFERENCE = [
    "openai/text-stream-obfuscation",
    "openai/text-stream-include-usage",
    "openai/text-stream-2024-include-usage",
    "openai/finish-length",
    "openai/finish-content-filter",
    "openai/refusal-stream-obfuscation",
    "openai/refusal-stream-2024",
    "openai/tool-call-role-merged-include-usage",
    "openai/parallel-tool-calls-role-merged",
    "openai/n2-interleaved-logprobs",
]


def _report(case: Case) -> LintReport:
    assert CATALOGUE is not None
    return lint_case(case, CATALOGUE)


def _expected(case: Case, *, baselines: bool) -> set[str]:
    assert CATALOGUE is not None
    tags = set(case.data["tags"])
    if baselines:
        tags |= set(CATALOGUE.baselines.get(case.provider, []))
    return tags & DETECTABLE


def _streams() -> list[str]:
    return [c.id for c in CORPUS.cases if _report(c).kind == "stream"]


def _bodies() -> list[str]:
    return [c.id for c in CORPUS.cases if _report(c).kind != "stream"]


# -------------------------------------------------------------- the corpus property


@pytest.mark.parametrize("case_id", _streams())
def test_lint_of_a_stream_reports_exactly_its_tags_and_baselines(case_id: str) -> None:
    case = CASES[case_id]
    found = _report(case).quirks
    expected = _expected(case, baselines=True)
    gap = STREAM_GAPS.get(case_id)
    if gap is None:
        assert found == expected, (
            f"lint sees {sorted(found - expected)} the tags lack, "
            f"misses {sorted(expected - found)} the tags state"
        )
        return
    assert found != expected, f"{case_id}: tags and bytes now agree; drop its STREAM_GAPS entry"
    assert found == (expected | set(gap.add)) - set(gap.remove), (
        f"{case_id}: the gap changed: lint adds {sorted(found - expected)}, "
        f"drops {sorted(expected - found)}"
    )


@pytest.mark.parametrize("case_id", _bodies())
def test_lint_of_a_json_or_error_body_reports_exactly_its_tags(case_id: str) -> None:
    case = CASES[case_id]
    found = _report(case).quirks
    expected = _expected(case, baselines=False)
    gap = BODY_GAPS.get(case_id)
    if gap is None:
        assert found == expected, (
            f"lint sees {sorted(found - expected)} the tags lack, "
            f"misses {sorted(expected - found)} the tags state"
        )
        return
    assert found != expected, f"{case_id}: tags and bytes now agree; drop its BODY_GAPS entry"
    assert found == (expected | set(gap.add)) - set(gap.remove), (
        f"{case_id}: the gap changed: lint adds {sorted(found - expected)}, "
        f"drops {sorted(expected - found)}"
    )


def test_every_gap_names_a_case_of_its_kind_with_a_reason() -> None:
    streams, bodies = set(_streams()), set(_bodies())
    for gaps, kind in ((STREAM_GAPS, streams), (BODY_GAPS, bodies)):
        for case_id, gap in gaps.items():
            assert case_id in kind, f"{case_id}: no such case of that kind"
            assert gap.why and (gap.add or gap.remove), case_id
            assert set(gap.add) <= DETECTABLE and set(gap.remove) <= DETECTABLE, case_id


@pytest.mark.parametrize("case_id", OPENAI_REFERENCE)
def test_the_openai_reference_streams_lint_clean(case_id: str) -> None:
    report = _report(CASES[case_id])
    assert report.kind == "stream"
    assert report.deviations == [], report.lines()
    assert report.exit_code == 0


def test_every_quirk_lint_names_is_catalogued() -> None:
    assert CATALOGUE is not None
    missing = DETECTABLE - set(CATALOGUE.quirks)
    assert not missing, sorted(missing)


def test_out_of_scope_quirks_are_never_reported() -> None:
    for quirk in ("incremental", "utf8-split", "split-read", "cut-off", "vendor-fields"):
        assert quirk not in DETECTABLE
    for case in CORPUS.cases:
        assert _report(case).quirks <= DETECTABLE, case.id


# ----------------------------------------------------------------- exact offsets
