"""What a provider can cite: lint naming its versions, an in-stream error read as
the provider's signalling, and a provider report that counts cases and quirks.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from streamproof.__about__ import __version__
from streamproof.checks.report import NOTE, SIGNALS, lint_body, lint_case
from streamproof.cli.lint import add_arguments
from streamproof.cli.lint import run as lint_main
from streamproof.cli.providers import add_arguments as providers_arguments
from streamproof.cli.providers import run as providers_main
from streamproof.corpus import load_corpus
from streamproof.corpus.quirks import Catalogue, load_quirks
from streamproof.reporting.providers import LEFT_OUT, provider_report, write_provider_report

CORPUS = load_corpus()
CATALOGUE, _ = load_quirks(CORPUS.root)
assert isinstance(CATALOGUE, Catalogue)
CASES = {case.id: case for case in CORPUS.cases}
QUIRKS_SHA256 = hashlib.sha256((CORPUS.root / "quirks.json").read_bytes()).hexdigest()

_HEAD = '"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m"'
_ROLE = f'{{{_HEAD},"choices":[{{"index":0,"delta":{{"role":"assistant","content":"Hi"}},"finish_reason":null}}]}}'  # noqa: E501
_ERROR = (
    '{"error":{"message":"upstream overloaded","type":"server_error","param":null,"code":null}}'
)


def _stream(*events: str) -> bytes:
    return b"".join(event.encode() + b"\n\n" for event in events)


def _lint(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="streamproof lint")
    add_arguments(parser)
    code = lint_main(parser.parse_args(list(argv)))
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------ an error inside a 200 stream


def test_an_error_object_in_a_stream_is_a_note_not_a_deviation() -> None:
    assert CATALOGUE is not None
    body = _stream(f"data: {_ROLE}", f"data: {_ERROR}", "data: [DONE]")
    report = lint_body(body, "stream", CATALOGUE)
    assert report.deviations == []
    [note] = report.notes
    assert note.quirk == "error-in-200" and note.severity == NOTE
    assert note.offset == body.index(b'"error"')
    assert "'upstream overloaded'" in note.message and "semantics §8.1" in note.message
    assert report.exit_code == 0 and report.quirks == {"error-in-200"}
    assert report.summary().startswith("0 deviations (0 must, 0 should, 0 may) and 1 note in ")
    assert report.as_dict()["notes"][0]["severity"] == "note"


def test_an_event_error_is_a_note_that_says_what_the_error_says() -> None:
    assert CATALOGUE is not None
    body = _stream(f"data: {_ROLE}", f"event: error\ndata: {_ERROR}")
    report = lint_body(body, "stream", CATALOGUE)
    [note] = report.notes
    assert note.offset == body.index(b"event: error")
    assert "'upstream overloaded'" in note.message and "semantics §8.2" in note.message
    # what is still a departure stays one: the event type, the missing [DONE]
    assert {d.quirk for d in report.deviations} == {"event-type", "no-done"}


def test_an_error_in_a_200_json_body_stays_a_must_deviation() -> None:
    assert CATALOGUE is not None
    assert "error-in-200" not in SIGNALS.get("completion", frozenset())
    report = lint_body(_ERROR.encode(), "completion", CATALOGUE)
    assert ("error-in-200", "must") in [(d.quirk, d.severity) for d in report.deviations]
    assert report.notes == [] and report.exit_code == 1


_IN_STREAM_ERRORS = [
    c.id
    for c in CORPUS.cases
    if "error-in-200" in c.data["tags"] and c.data["response"].get("body") == "response.sse"
]


def test_the_corpus_has_in_stream_errors_of_several_providers() -> None:
    providers = {case_id.split("/")[0] for case_id in _IN_STREAM_ERRORS} - set(LEFT_OUT)
    assert {"openai", "openrouter", "vllm", "tgi", "groq"} <= providers


@pytest.mark.parametrize("case_id", _IN_STREAM_ERRORS)
def test_a_providers_in_stream_error_is_reported_as_a_note(case_id: str) -> None:
    assert CATALOGUE is not None
    report = lint_case(CASES[case_id], CATALOGUE)
    assert report.kind == "stream"
    assert [n.quirk for n in report.notes] == ["error-in-200"]
    assert "error-in-200" not in {d.quirk for d in report.deviations}


def test_the_command_prints_the_note_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _lint(capsys, "openai/error-object-mid-stream")
    assert code == 0 and err == ""
    lines = out.splitlines()
    [note] = [line for line in lines if "error-in-200" in line]
    assert note.split()[1] == "note"
    assert lines[-2].endswith(
        f"and 1 note in openai/error-object-mid-stream: stream, "
        f"{len(CASES['openai/error-object-mid-stream'].body)} bytes"
    )


# --------------------------------------------------------------- lint names its versions


def _versions(document: dict[str, object]) -> tuple[object, object, object]:
    return document["tool"], document["corpus"], document["catalogue"]


@pytest.mark.parametrize("target", ["case", "file"])
def test_lint_json_names_tool_corpus_and_catalogue(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, target: str
) -> None:
    case = CASES["vllm/error-event-then-done"]
    argv = [case.id]
    if target == "file":
        path = tmp_path / "body.sse"
        path.write_bytes(case.body)
        argv = [str(path)]
    code, out, _ = _lint(capsys, "--json", *argv)
    document = json.loads(out)
    assert code == 0 == document["exit"]
    assert _versions(document) == (
        {"name": "streamproof", "version": __version__},
        {"version": CORPUS.version, "sha256": CORPUS.sha256},
        {"file": "quirks.json", "sha256": QUIRKS_SHA256},
    )
    assert [n["quirk"] for n in document["notes"]] == ["error-in-200"]


def test_another_catalogue_is_named_by_its_own_digests(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = tmp_path / "corpus"
    shutil.copytree(CORPUS.root, root)
    quirks = json.loads((root / "quirks.json").read_text(encoding="utf-8"))
    quirks["quirks"]["no-done"]["severity"] = "must"
    (root / "quirks.json").write_text(json.dumps(quirks), encoding="utf-8")
    body = tmp_path / "body.sse"
    body.write_bytes(CASES["openai/error-object-mid-stream"].body)
    code, out, _ = _lint(capsys, "--json", "--corpus", str(root), str(body))
    document = json.loads(out)
    assert code == 1  # graded by the edited catalogue
    new = hashlib.sha256((root / "quirks.json").read_bytes()).hexdigest()
    assert document["catalogue"]["sha256"] == new != QUIRKS_SHA256
    assert document["corpus"]["version"] == CORPUS.version
    assert document["corpus"]["sha256"] not in (CORPUS.sha256, "")


def test_a_corpus_without_a_version_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "quirks.json").write_bytes((CORPUS.root / "quirks.json").read_bytes())
    body = tmp_path / "body.sse"
    body.write_bytes(CASES["openai/text-stream-obfuscation"].body)
    code, out, err = _lint(capsys, "--corpus", str(tmp_path), str(body))
    assert code == 2 and out == ""
    assert err.startswith("streamproof lint: ") and "VERSION" in err
    assert len(err.splitlines()) == 1


# ------------------------------------------------------------------ the provider report

REPORT = provider_report(CORPUS)


def test_the_folders_that_are_not_providers_are_left_out_and_named() -> None:
    assert set(LEFT_OUT) == {"generic", "sse-spec", "wire"}
    names = {p["provider"] for p in REPORT["providers"]}
    assert not names & set(LEFT_OUT)
    assert not {p for q in REPORT["quirks"] for p in q["providers"]} & set(LEFT_OUT)
    per_folder = {f["folder"]: f["cases"] for f in REPORT["left_out"]}
    assert per_folder == {name: sum(c.provider == name for c in CORPUS.cases) for name in LEFT_OUT}
    assert REPORT["totals"]["cases"] + sum(per_folder.values()) == len(CORPUS.cases)
    assert REPORT["totals"]["providers"] == len(names)


def test_each_figure_counts_cases_and_distinct_quirks() -> None:
    assert CATALOGUE is not None
    for row in REPORT["providers"]:
        cases = [c for c in CORPUS.cases if c.provider == row["provider"]]
        reports = {c.id: lint_case(c, CATALOGUE) for c in cases}
        shown = {q["quirk"]: q for q in row["quirks"]}
        assert set(shown) == set().union(*(r.quirks for r in reports.values()))
        for quirk, entry in shown.items():
            assert entry["cases"] == [c.id for c in cases if quirk in reports[c.id].quirks]
        levels = [q["severity"] for q in row["quirks"]]
        assert row["quirks_by_severity"] == {
            level: levels.count(level) for level in ("must", "should", "may", "note")
        }
        assert row["clean"] == sum(not r.deviations for r in reports.values())
        assert row["clean"] + sum(row["cases_by_worst"].values()) == row["cases"] == len(cases)
    every = {q["quirk"] for row in REPORT["providers"] for q in row["quirks"]}
    assert {q["quirk"] for q in REPORT["quirks"]} == every
    assert sum(REPORT["totals"]["quirks"].values()) == len(every)


def test_more_cases_of_the_same_quirks_do_not_raise_the_figures() -> None:
    openai = [c for c in CORPUS.cases if c.provider == "openai"]
    once = provider_report(type(CORPUS)(CORPUS.root, CORPUS.version, openai), CATALOGUE)
    twice = provider_report(type(CORPUS)(CORPUS.root, CORPUS.version, openai * 2), CATALOGUE)
    [one], [two] = once["providers"], twice["providers"]
    assert two["cases"] == 2 * one["cases"]
    assert two["quirks_by_severity"] == one["quirks_by_severity"]
    assert twice["totals"]["quirks"] == once["totals"]["quirks"]


def test_an_in_stream_error_is_a_note_in_the_report(tmp_path: Path) -> None:
    groq = next(p for p in REPORT["providers"] if p["provider"] == "groq")
    entry = next(q for q in groq["quirks"] if q["quirk"] == "error-in-200")
    assert entry["severity"] == "note" and entry["observed"] == "2026-02-18"
    assert entry["cases"] == sorted(c for c in _IN_STREAM_ERRORS if c.startswith("groq/"))
    assert groq["quirks_by_severity"]["note"] == 1
    [glossary] = [q for q in REPORT["quirks"] if q["quirk"] == "error-in-200"]
    assert glossary["severity"] == "note"
    write_provider_report(CORPUS, tmp_path / "p.html", tmp_path / "p.json")
    html = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert '<th class="p">groq</th>' in html and '<th class="p">generic</th>' not in html
    assert "sha256 <code>" + QUIRKS_SHA256 in html


def test_the_providers_command_says_what_it_left_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    parser = argparse.ArgumentParser(prog="streamproof providers")
    providers_arguments(parser)
    out_html = tmp_path / "providers.html"
    assert providers_main(parser.parse_args(["--output", str(out_html)])) == 0
    line = capsys.readouterr().out.strip()
    assert line.endswith("; not providers: generic, sse-spec, wire)")
    assert json.loads(out_html.with_suffix(".json").read_text())["catalogue"]["sha256"] == (
        QUIRKS_SHA256
    )
