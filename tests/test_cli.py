from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from streamproof.resources import data_path
from streamproof.schemas import schema_errors

ADAPTERS = Path(__file__).parent / "adapters"


def streamproof(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streamproof", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


@pytest.fixture
def broken_corpus(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus"
    shutil.copytree(data_path("corpus"), corpus)
    bad = corpus / "cases/generic/finish-without-done/case.json"
    bad.write_text('{"id": "generic/finish-without-done", ')
    return corpus, bad


def test_run_reference_over_four_transports_writes_valid_json(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    proc = streamproof(
        "run",
        "--adapter",
        "reference",
        "--transport",
        "whole,lines,bytes,random",
        "--seed",
        "7",
        "--json",
        out,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    document = json.loads(out.read_text())
    assert schema_errors("results", document) is None
    summary = document["summary"]
    assert summary["failed"] == summary["errors"] == 0
    assert summary["passed"] == summary["total"] >= 40 * 4
    assert {r["transport"] for r in document["results"]} == {"whole", "lines", "bytes", "random"}
    assert document["corpus"]["version"] == (data_path("corpus") / "VERSION").read_text().strip()
    assert "0 failed" in proc.stdout
    assert document["run"]["seed"] == 7
    assert "--seed 7" in proc.stdout


def test_failing_adapter_exits_1_with_first_divergences() -> None:
    proc = streamproof("run", "--adapter", ADAPTERS / "naive_lines.py", "--transport", "whole")
    assert proc.returncode == 1
    line = next(x for x in proc.stdout.splitlines() if "sse-spec/cr-line-endings" in x)
    assert line.startswith(("FAIL", "CRASH"))
    assert "choices[0]" in line or "Error" in line
    assert "Traceback" not in proc.stdout + proc.stderr


def test_crashing_adapter_exits_1_without_traceback() -> None:
    proc = streamproof("run", "--adapter", ADAPTERS / "raises.py", "--transport", "whole")
    assert proc.returncode == 1
    assert "CRASH" in proc.stdout and "ValueError: parser exploded" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_fail_on_must_ignores_lesser_failures() -> None:
    # The naive parser fails a "may" case; with --fail-on must only musts count.
    proc = streamproof(
        "run",
        "--adapter",
        ADAPTERS / "naive_lines.py",
        "--transport",
        "whole",
        "--case",
        "sse-spec/last-chunk-without-blank-line-no-done",
        "--case",
        "generic/text-split-per-token",
        "--fail-on",
        "must",
    )
    assert proc.returncode == 0, proc.stdout


@pytest.mark.parametrize("command", ["run", "validate", "list"])
def test_broken_case_file_is_exit_2_and_one_line(
    command: str, broken_corpus: tuple[Path, Path]
) -> None:
    corpus, bad = broken_corpus
    proc = streamproof(command, "--corpus", corpus)
    assert proc.returncode == 2
    lines = [x for x in proc.stderr.splitlines() if str(bad) in x]
    assert len(lines) == 1 and "not valid JSON" in lines[0]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "--adapter", "nope"), "is not a built-in adapter"),
        (("run", "--transport", "pigeon"), "unknown"),
        (("run", "--case", "zzz/*"), "matches no case"),
        (("show", "zzz/none"), "no case 'zzz/none'"),
        (("run", "--corpus", "/nonexistent"), "not a corpus"),
    ],
)
def test_usage_errors_exit_2(args: tuple[str, ...], message: str) -> None:
    proc = streamproof(*args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_validate_ok() -> None:
    proc = streamproof("validate")
    assert proc.returncode == 0
    assert proc.stdout.startswith("ok: ")


def test_show_makes_invisible_bytes_visible() -> None:
    proc = streamproof("show", "sse-spec/crlf-line-endings", "--transport", "lines")
    assert proc.returncode == 0
    assert "\\r\\n" not in proc.stdout  # lines splits CRLF: the mark stands between them
    assert "\\r¦\\n" in proc.stdout
    bom = streamproof("show", "sse-spec/bom-at-start")
    assert "<BOM>data:" in bom.stdout
    assert '"expected"' not in bom.stdout and "--- expected ---" in bom.stdout


def test_list_names_every_case() -> None:
    proc = streamproof("list")
    assert proc.returncode == 0
    assert "generic/usage-in-empty-choices-chunk" in proc.stdout
