"""What a run judges: the field groups of docs/semantics.md §12.6, derived twice.

This test derives from the case files alone, with its own reading of the
rules (not ``harness.projection``), which (case, group) pairs each of three
capability sets is judged on — the text profile, the README example's and
the reference's — and checks that a real run's results name exactly those.
The adapter is the reference parser behind each capability set, so every
status it reports is the expected one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from commands import load, streamproof

from streamproof.corpus import load_corpus
from streamproof.harness.loader import CAPABILITIES, V1_CAPABILITIES, load_adapter
from streamproof.harness.projection import PROFILES, choice_key_group, plan_groups

CHOICE_KEYS = (
    "content", "role", "reasoning", "refusal", "finish_reason", "tool_calls",
    "function_call", "logprobs", "audio", "annotations",
)  # fmt: skip
SETS = {
    "text": {"content", "usage"},
    "readme": {"content", "finish_reason", "usage", "stream_error", "truncation"},
    "reference": {
        "content", "role", "finish_reason", "usage", "tool_calls", "reasoning", "refusal",
        "multiple_choices", "stream_error", "http_error", "truncation", "non_streaming",
        "metadata", "incremental",
        "function_call", "custom_tool_calls", "logprobs", "audio", "annotations",
    },
}  # fmt: skip


def judged(data: dict[str, Any], caps: set[str]) -> set[str]:
    """Every group some alternative of the case in ``data`` compares."""
    return set().union(*alternatives_judged(data, caps))


def common(data: dict[str, Any], caps: set[str]) -> set[str]:
    """The groups every alternative compares: a profile's pairs of the case."""
    found = alternatives_judged(data, caps)
    return set.intersection(*found) if found else set()


def alternatives_judged(data: dict[str, Any], caps: set[str]) -> list[set[str]]:
    """For each alternative of the case in ``data``, the groups a run compares,
    read from its case.json."""
    status = data["response"]["status"]
    json_answer = data["response"]["body"] == "response.json" and not data["request"].get("stream")
    if "fault" in data or (status >= 400 and "http_error" not in caps):
        return []
    if status < 400 and json_answer and "non_streaming" not in caps:
        return []
    every: list[set[str]] = []
    alternatives = data.get("expected_any") or [data["expected"]]
    for want in alternatives:
        found: set[str] = set()
        if "status" in want or "error" in want:
            expected = want.get("status", "complete")
            signal = {
                "error": "http_error" if status >= 400 else "stream_error",
                "truncated": "truncation",
            }.get(expected)
            if signal is None or signal in caps:
                found.add("status")
        simple = {"usage": "usage", "id": "metadata", "model": "metadata", "deltas": "incremental"}
        for key, cap in simple.items():
            if key in want and cap in caps:
                found.add({"id": "metadata", "model": "metadata"}.get(key, key))
        choices = want.get("choices") or []
        if choices:
            keys = {k for k in CHOICE_KEYS if k in choices[0]}
            calls = choices[0].get("tool_calls") or []
            if any("custom" in call for call in calls):  # a custom call: its own group
                keys = keys - {"tool_calls"} | {"custom_tool_calls"}
            found |= keys & caps
        later = any(set(c) - {"index"} for c in choices[1:])
        if (len(choices) > 1 or later) and "multiple_choices" in caps:
            found.add("choices")
        every.append(found)
    # semantics §2.1: the content type decides, else the request's stream flag
    content_type = data["response"]["headers"].get("content-type", "").lower()
    if "event-stream" in content_type:
        streamed = True
    elif "json" in content_type:
        streamed = False
    else:
        streamed = bool(data["request"].get("stream"))
    deltas = "incremental" in caps and (
        (status < 400 and streamed)  # the incremental check of a streamed body (§11)
        or "incremental" in data["requires"]
    )
    return [found | {"deltas"} if deltas else found for found in every]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("sets")
    found = {}
    for name, caps in SETS.items():
        adapter = folder / f"as_{name}.py"
        adapter.write_text(
            "from streamproof.reference import ResponseReader\n"
            f"NAME = 'reference-as-{name}'\n"
            f"CAPABILITIES = {sorted(caps)!r}\n"
            "def parse(response):\n"
            "    reader = ResponseReader(response.status, response.headers, response.request)\n"
            "    deltas = []\n"
            "    for data in response.iter_bytes():\n"
            "        for choice, text in reader.feed(data):\n"
            "            deltas.append({'choice': choice, 'content': text,\n"
            "                           'at_byte': response.bytes_delivered})\n"
            "    return {**reader.close(), 'deltas': deltas}\n",
            encoding="utf-8",
        )
        out = folder / f"{name}.json"
        proc = streamproof(
            "run", "--adapter", adapter, "--transport", "whole", "--json", out, "--no-html",
            cwd=folder,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        found[name] = load(out)
    return found


@pytest.mark.parametrize("name", list(SETS))
def test_a_run_judges_exactly_the_pairs_the_case_files_give(
    runs: dict[str, dict[str, Any]], name: str
) -> None:
    corpus = load_corpus()
    cases = {
        c.id: json.loads((c.dir / "case.json").read_text(encoding="utf-8")) for c in corpus.cases
    }
    rows = runs[name]["results"]
    assert {r["case"] for r in rows} == {c.id for c in corpus.cases if c.runnable}
    for row in rows:
        each = alternatives_judged(cases[row["case"]], SETS[name])
        got = set(row.get("groups") or {})
        if not each:  # a precondition leaves the case out
            assert not got
        elif len(each) == 1:
            assert got == each[0], (row["case"], sorted(got), sorted(each[0]))
        else:  # one alternative decides: the largest of those the reading passes
            assert got in each and got >= common(cases[row["case"]], SETS[name]), row["case"]
        assert (row["verdict"] == "skip") == (not judged(cases[row["case"]], SETS[name]))
        assert row["verdict"] == "skip" or set(row["groups"].values()) == {"pass"}


def test_the_profiles_are_the_sets_and_their_figures_add_up(
    runs: dict[str, dict[str, Any]],
) -> None:
    assert PROFILES["text"] == SETS["text"] and PROFILES["readme"] == SETS["readme"]
    assert PROFILES["full"] == SETS["reference"]
    corpus = load_corpus()
    cases = {
        c.id: json.loads((c.dir / "case.json").read_text(encoding="utf-8")) for c in corpus.cases
    }
    for name, profile in (("text", "text"), ("readme", "readme"), ("reference", "full")):
        figures = runs[name]["summary"]["profiles"][profile]
        pairs = sum(len(common(cases[r["case"]], SETS[name])) for r in runs[name]["results"])
        # The reference behind the profile's own capabilities: every pair judged and right.
        assert figures["judged"] == figures["passed"] == pairs > 0


def test_shares_of_the_in_process_cases_judged(runs: dict[str, dict[str, Any]]) -> None:
    """The text profile is judged on most cases (it was 1 in 436 before field groups)."""
    corpus = load_corpus()
    in_process = [c for c in corpus.cases if c.runnable and c.fault is None]
    for name, least in (("text", 0.6), ("readme", 0.6), ("reference", 0.95)):
        judged_cases = {r["case"] for r in runs[name]["results"] if r["verdict"] != "skip"}
        assert len(judged_cases) / len(in_process) >= least, name


def shares() -> dict[str, str]:  # pragma: no cover - for the closing note and the docs
    corpus = load_corpus()
    in_process = [c for c in corpus.cases if c.runnable and c.fault is None]
    found = {}
    for name, caps in SETS.items():
        cases = [
            c for c in in_process if judged(json.loads((c.dir / "case.json").read_text()), caps)
        ]
        found[name] = (
            f"{len(cases)} of {len(in_process)} ({100 * len(cases) / len(in_process):.1f}%)"
        )
    return found


if __name__ == "__main__":  # pragma: no cover
    print(shares())
    print(Path(__file__).name)


def test_an_adapter_that_declares_nothing_has_the_first_fourteen(tmp_path: Path) -> None:
    path = tmp_path / "bare.py"
    path.write_text("def parse(response):\n    return {'status': 'complete'}\n")
    assert load_adapter(str(path)).capabilities == V1_CAPABILITIES == SETS["reference"] - NEW_PARTS
    assert CAPABILITIES == V1_CAPABILITIES | NEW_PARTS


NEW_PARTS = {"function_call", "custom_tool_calls", "logprobs", "audio", "annotations"}


@pytest.mark.parametrize(
    ("case_id", "group"),
    [
        ("openai/function-call-legacy-stream", "function_call"),
        ("openai/custom-tool-call-stream", "custom_tool_calls"),
        ("openai/logprobs-content-tokens-concatenated", "logprobs"),
        ("openai/audio-transcript-and-data-pieces", "audio"),
        ("openrouter/web-search-annotations-one-per-chunk", "annotations"),
    ],
)
def test_a_new_part_is_judged_only_for_an_adapter_that_claims_it(case_id: str, group: str) -> None:
    case = next(c for c in load_corpus().cases if c.id == case_id)
    assert group in plan_groups(case, V1_CAPABILITIES).not_exposed
    plan = plan_groups(case, V1_CAPABILITIES | {group})
    assert group in plan.exposed and "tool_calls" not in plan.stated


def test_a_custom_call_in_a_later_choice_needs_its_capability() -> None:
    custom = [{"index": 0, "custom": {"name": "n", "input": "i"}}]
    assert choice_key_group("tool_calls", custom) == "custom_tool_calls"
    assert choice_key_group("tool_calls", [{"index": 0, "function": {}}]) == "tool_calls"
    assert choice_key_group("content", "x") == "content"


def test_planning_a_corpus_reads_each_case_back_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The run, the summary's groups, the capability gaps and three profiles all
    # plan every case: the facts they need are read from the files once.
    from streamproof.corpus import entry

    reads: list[str] = []
    real = entry._read_unchanged

    def counted(path: str, sha256: bytes) -> bytes:
        reads.append(path)
        return real(path, sha256)

    monkeypatch.setattr(entry, "_read_unchanged", counted)
    cases = load_corpus().cases[:60]
    for capabilities in (PROFILES["text"], PROFILES["readme"], PROFILES["full"], CAPABILITIES):
        for in_process in (True, False):
            for case in cases:
                plan_groups(case, capabilities, in_process=in_process)
    assert len(reads) == 2 * len(cases)  # case.json and body, once each
    # Judging still reads the expectation (the case in hand: the recent cache serves it).
    plan = plan_groups(cases[0], CAPABILITIES)
    assert plan.alternatives[0].expected == cases[0].alternatives[0]
