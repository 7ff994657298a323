"""The command line keeps pytest's and ruff's habits: what a user types first works."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from commands import streamproof as streamproof_cli

import streamproof
from streamproof.cli import main
from streamproof.corpus import load_corpus
from streamproof.harness.selection import KeywordError, Selection, keyword_matcher, split_run_id

ADAPTERS = Path(__file__).resolve().parent / "adapters"
CORPUS = load_corpus()
BY_ID = {c.id: c for c in CORPUS.cases}


def _runs(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(("PASS", "FAIL", "SKIP"))]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sse-spec/bom-at-start [bytes]", ("sse-spec/bom-at-start", "bytes")),
        ("sse-spec/bom-at-start[bytes]", ("sse-spec/bom-at-start", "bytes")),
        ("streamproof::sse-spec/bom-at-start[lines]", ("sse-spec/bom-at-start", "lines")),
        ("sse-spec/*", ("sse-spec/*", None)),
    ],
)
def test_run_ids_as_printed_parse_back(text: str, expected: tuple[str, str | None]) -> None:
    assert split_run_id(text) == expected


def test_selection_by_printed_id_glob_provider_and_keyword() -> None:
    bom = BY_ID["sse-spec/bom-at-start"]
    one = Selection.parse(["sse-spec/bom-at-start [bytes]"])
    assert one.plan(CORPUS.cases, ["whole", "bytes"]) == [(bom, "bytes")]
    both = Selection.parse(["sse-spec/bom-at-start,generic/finish-without-done"])
    assert len(both.plan(CORPUS.cases, ["whole"])) == 2
    provider = Selection.parse(providers=["sse-spec"])
    assert {c.provider for c, _ in provider.plan(CORPUS.cases, ["whole"])} == {"sse-spec"}
    keyword = Selection.parse(providers=["sse-spec"], keyword="bom and not bytes")
    planned = keyword.plan(CORPUS.cases, ["whole", "bytes"])
    assert planned and all("bom" in c.id or "bom" in c.title.lower() for c, _ in planned)
    assert all(t == "whole" for _, t in planned)


@pytest.mark.parametrize("expression", ["", "(", "a and", "not", "a )", "or b"])
def test_a_bad_keyword_expression_is_one_error(expression: str) -> None:
    with pytest.raises(KeywordError):
        keyword_matcher(expression)


def test_keyword_expressions_follow_pytest() -> None:
    assert keyword_matcher("usage and not (groq or x)")("openai usage\nfoo")
    assert not keyword_matcher("usage and not (groq or x)")("groq usage")
    assert keyword_matcher("USAGE")("usage")


def test_repeated_transports_and_cases_add_up(tmp_path: Path) -> None:
    proc = streamproof_cli(
        "run",
        "--no-html",
        "-v",
        "--transport",
        "whole",
        "--transport",
        "lines,whole",
        "--case",
        "sse-spec/bom-at-start",
        "--case",
        "generic/finish-without-done [lines]",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "of 3 case runs (2 cases)" in proc.stdout
    assert not (tmp_path / "streamproof-report.html").exists()


def test_every_run_writes_the_html_report_by_default(tmp_path: Path) -> None:
    proc = streamproof_cli(
        "run", "--adapter", "reference", "--case", "generic/finish-without-done [whole]",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "streamproof-report.html").is_file()
    assert "report: streamproof-report.html" in proc.stdout
    assert "of 1 case run (1 case)" in proc.stdout


def test_provider_keyword_exitfirst_quiet_and_verbose(tmp_path: Path) -> None:
    verbose = streamproof_cli(
        "run", "--no-html", "--provider", "sse-spec", "-k", "crlf", "--transport", "whole", "-v",
        cwd=tmp_path,
    )  # fmt: skip
    lines = _runs(verbose.stderr)
    assert lines and all("sse-spec/" in line for line in lines)
    quiet = streamproof_cli(
        "run", "--no-html", "--adapter", ADAPTERS / "raises.py", "--case", "generic/*",
        "--transport", "whole", "-q", cwd=tmp_path,
    )  # fmt: skip
    assert quiet.returncode == 1
    assert "CRASH" not in quiet.stdout and "crashed" in quiet.stdout
    first = streamproof_cli(
        "run", "--no-html", "--adapter", ADAPTERS / "raises.py", "--case", "generic/*",
        "--transport", "whole", "-x", cwd=tmp_path,
    )  # fmt: skip
    assert first.returncode == 1
    assert "stopped at the first failure (-x) after 1 of" in first.stdout
    assert "of 1 case run (1 case)" in first.stdout


def test_exitfirst_refuses_outputs_that_read_as_a_whole_run(tmp_path: Path) -> None:
    proc = streamproof_cli("run", "-x", "--json", tmp_path / "r.json", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "-x" in proc.stderr


def test_a_usage_error_prints_the_subcommands_usage() -> None:
    proc = streamproof_cli("run", "--bogus")
    assert proc.returncode == 2
    assert "usage: streamproof run" in proc.stderr


def test_a_closed_pipe_ends_quietly() -> None:
    proc = subprocess.run(
        f"{sys.executable} -m streamproof list | head -1",
        shell=True,
        capture_output=True,
        text=True,
        check=False,
        executable="/bin/bash",
    )
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert proc.stdout.count("\n") == 1


def test_show_prints_requires_spec_tags_and_request() -> None:
    case = BY_ID["openai/text-stream-include-usage"]
    proc = streamproof_cli("show", f"{case.id} [lines]")
    assert proc.returncode == 0, proc.stderr
    assert f"requires: {', '.join(sorted(case.requires))}" in proc.stdout
    assert "spec: " in proc.stdout and "tags: " in proc.stdout
    assert f"request: {json.dumps(case.request, ensure_ascii=False)}" in proc.stdout
    assert "reads marked ¦ (lines)" in proc.stdout


def test_show_of_a_transport_the_case_cannot_have_is_one_line() -> None:
    without = next(c for c in CORPUS.cases if not c.has_chunks)
    proc = streamproof_cli("show", without.id, "--transport", "recorded")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "no recorded reads" in proc.stderr


def test_list_counts_with_correct_plurals() -> None:
    proc = streamproof_cli("list", "--provider", "sse-spec")
    assert proc.stdout.splitlines()[-1].split(", corpus")[0].endswith("of 1 provider")


def test_the_plugin_counts_what_it_collects(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--streamproof", "reference",
        "--streamproof-transport", "whole", "--streamproof-case", "sse-spec/*",
        "-k", "bom",
    )  # fmt: skip
    sse = sum(1 for c in CORPUS.cases if c.provider == "sse-spec" and c.runnable)
    result.stdout.fnmatch_lines([f"collected {sse} items / * deselected / * selected"])
    assert "-" not in result.stdout.str().split("collected", 1)[1].split("\n", 1)[0]


def test_replay_gives_the_response_parse_receives() -> None:
    response = streamproof.replay("sse-spec/crlf-line-endings [bytes]")
    case = BY_ID["sse-spec/crlf-line-endings"]
    reads = list(response.iter_bytes())
    assert b"".join(reads) == case.body and len(reads) == len(case.body)
    assert response.status == case.status and response.transport == "bytes"
    assert streamproof.replay(case.id).transport == "whole"


def test_debug_runs_one_case_in_the_foreground(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["debug", "sse-spec/bom-at-start [bytes]"]) == 0
    out = capsys.readouterr().out
    assert '"status": "complete"' in out and "--- pass" in out
    assert (
        main(["debug", "generic/finish-without-done", "--adapter", str(ADAPTERS / "raises.py")])
        == 1
    )
    captured = capsys.readouterr()
    assert "raises.py" in captured.err and "ValueError" in captured.err
    assert "rerun with --pdb" in captured.out
