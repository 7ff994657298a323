"""scripts/corpus-breadth: the breadth table in corpus/README.md is current and counts right."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "corpus-breadth"


def _load() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("corpus_breadth", str(SCRIPT))
    spec = importlib.util.spec_from_loader("corpus_breadth", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


breadth = _load()


def _case(
    root: Path, case_id: str, expected: dict, body: bytes, *, status: int = 200, observed: str
) -> None:
    folder = root / "cases" / case_id
    folder.mkdir(parents=True)
    name = "response.sse" if body.startswith(b"data:") else "response.json"
    (folder / name).write_bytes(body)
    case = {
        "id": case_id,
        "response": {"status": status, "headers": {}, "body": name},
        "provenance": {"kind": "documented", "source": "https://example.com", "observed": observed},
        "expected": expected,
    }
    (folder / "case.json").write_text(json.dumps(case), encoding="utf-8")


def test_the_readme_table_is_current() -> None:
    readme = (ROOT / "corpus" / "README.md").read_text(encoding="utf-8")
    section = breadth.section(ROOT / "corpus" / "cases")
    assert section in readme, "corpus/README.md is out of date: run scripts/corpus-breadth --write"


def test_check_fails_on_a_stale_table(tmp_path: Path) -> None:
    text = {"choices": [{"content": "hi"}]}
    _case(tmp_path, "acme/one", text, b'data: {"id":"a"}\n\n', observed="2026-01-02")
    (tmp_path / "README.md").write_text("# corpus\n", encoding="utf-8")
    run = [sys.executable, str(SCRIPT), "--corpus", str(tmp_path)]
    assert subprocess.run([*run, "--check"], capture_output=True).returncode == 1
    assert subprocess.run([*run, "--write"], capture_output=True).returncode == 0
    assert subprocess.run([*run, "--check"], capture_output=True).returncode == 0
    written = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert "| acme | 1 | text (1) | 1 | 2026-01-02 |" in written


def test_a_missing_corpus_is_a_one_line_error(tmp_path: Path) -> None:
    command = [sys.executable, str(SCRIPT), "--corpus", str(tmp_path / "nowhere")]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "no such folder" in done.stderr


def test_scenarios_shapes_and_dates_per_provider(tmp_path: Path) -> None:
    two_calls = {
        "choices": [
            {
                "reasoning": "think",
                "finish_reason": "tool_calls",
                "tool_calls": [{"index": 0}, {"index": 1}],
            }
        ],
        "usage": {"total_tokens": 3},
    }
    stream = b'data: {"id":"a","choices":[]}\n\n'
    _case(tmp_path, "acme/tools", two_calls, stream, observed="2025-03")
    _case(
        tmp_path,
        "acme/n2-length",
        {"choices": [{"content": "a", "finish_reason": "length"}, {"content": "b"}]},
        b'data: {"choices":[],"id":"a"}\n\ndata: [DONE]\n\n',
        observed="2026-02-01",
    )
    error = {"status": "error"}
    _case(tmp_path, "acme/http", error, b'{"error": {}}', status=429, observed="2024-12-31")
    _case(tmp_path, "generic/ignored", error, b'data: {"error":{}}\n\n', observed="2020-01-01")
    (row,) = breadth.breadth(tmp_path / "cases")
    assert row["provider"] == "acme" and row["cases"] == 3
    assert row["scenarios"] == {
        "parallel tool calls",
        "reasoning",
        "usage",
        "n>1",
        "text",
        "length",
        "http error",
    }
    assert len(row["shapes"]) == 3  # two stream layouts and one JSON body
    table = breadth.table([row])
    assert "2024-12-31 to 2026-02-01" in table
    names = "text, parallel tool calls, n>1, reasoning, length, usage, http error (7)"
    assert f"| acme | 3 | {names} | 3 |" in table
