"""Schema checks remembered by content digest (corpus/checked.py), and the run's handover."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from streamproof.corpus import CorpusError, checked, load_corpus
from streamproof.corpus import cases as cases_module
from streamproof.resources import data_path

CASE = "generic/finish-without-done"


@pytest.fixture
def new_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache folder and an empty in-process memory, as on a new machine."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("STREAMPROOF_CACHE_DIR", str(folder))
    monkeypatch.setattr(checked, "_valid", None)
    monkeypatch.setattr(checked, "_added", [])
    return folder


@pytest.fixture
def cache(new_machine: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``new_machine`` without the shipped corpus's checks (tested on their own below)."""
    monkeypatch.setattr(checked, "_shipped", set)
    return new_machine


def test_the_shipped_checks_are_current() -> None:
    script = Path(__file__).parent.parent / "scripts" / "checked-corpus"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_new_machine_checks_no_shipped_case_again(
    new_machine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _counting(monkeypatch)
    corpus = load_corpus(data_path("corpus"), cached=False)
    assert calls == []
    assert len(corpus.cases) > 400


def test_shipped_checks_made_with_other_schemas_count_for_nothing(
    new_machine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checked, "shipped_header", lambda: "schemas " + "0" * 64)
    calls = _counting(monkeypatch)
    load_corpus(_one_case_corpus(tmp_path), cached=False)
    assert calls == ["case"]


def _one_case_corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    shutil.copytree(data_path("corpus") / "cases" / CASE, root / "cases" / CASE)
    shutil.copy(data_path("corpus") / "VERSION", root / "VERSION")
    shutil.copy(data_path("corpus") / "FORMAT", root / "FORMAT")
    return root


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = checked.schema_errors

    def counted(name: str, instance: Any) -> str | None:
        calls.append(name)
        return real(name, instance)

    monkeypatch.setattr(checked, "schema_errors", counted)
    return calls


def test_a_valid_case_is_checked_once_then_remembered_on_disk(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _one_case_corpus(tmp_path)
    calls = _counting(monkeypatch)
    load_corpus(root)
    assert calls == ["case"]
    load_corpus(root)
    assert calls == ["case"]  # remembered in this process
    checked.save()
    path = checked.cache_file()
    assert path is not None and path.parent == cache
    assert len(path.read_text().split()) == 1
    monkeypatch.setattr(checked, "_valid", None)  # as a new process
    load_corpus(root)
    assert calls == ["case"]  # remembered from the file


def test_an_edited_case_is_checked_again_and_its_error_reported(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _one_case_corpus(tmp_path)
    load_corpus(root)
    checked.save()
    case_json = root / "cases" / CASE / "case.json"
    data = json.loads(case_json.read_text())
    data["severity"] = "sometimes"
    case_json.write_text(json.dumps(data))
    for _ in range(2):  # a failing check is never remembered
        with pytest.raises(CorpusError, match="severity"):
            load_corpus(root)


def test_the_digest_is_of_the_bytes_read_not_of_a_manifest(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _one_case_corpus(tmp_path)
    load_corpus(root)
    calls = _counting(monkeypatch)
    case_json = root / "cases" / CASE / "case.json"
    case_json.write_text(case_json.read_text() + "\n")  # same value, other bytes
    load_corpus(root)
    assert calls == ["case"]


def test_a_garbled_or_unwritable_cache_is_only_slower(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _one_case_corpus(tmp_path)
    cache.mkdir()
    path = checked.cache_file()
    assert path is not None
    path.write_bytes(b"\xff\xfe not digests \x00")
    calls = _counting(monkeypatch)
    assert [c.id for c in load_corpus(root).cases] == [CASE]
    assert calls == ["case"]
    monkeypatch.setenv("STREAMPROOF_CACHE_DIR", str(path))  # a file where a folder should be
    checked.save()  # says nothing, raises nothing


def test_off_keeps_the_checks_in_memory_only(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STREAMPROOF_CACHE_DIR", "off")
    assert checked.cache_file() is None
    load_corpus(_one_case_corpus(tmp_path))
    checked.save()
    assert not cache.exists()


def test_an_outcome_off_schema_fails_every_time(cache: Path) -> None:
    from streamproof.harness.engine import Verdict, judge

    case = next(c for c in load_corpus().cases if c.id == CASE)
    bad = {"status": "finished-ish", "choices": []}
    for _ in range(2):
        result = judge(case, "whole", bad, 0.0)
        assert result.verdict is Verdict.FAIL
        assert "outcome schema" in result.message
    assert checked.outcome_text({"b": 1, "a": [1.0, "é"]}) == '{"a":[1.0,"é"],"b":1}'


def test_load_case_reads_through_the_gate_once(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _one_case_corpus(tmp_path)
    read: list[str] = []
    real = cases_module.read_text

    def counted(path: Path, root: Path | None = None, seen: Any = None) -> str:
        read.append(path.name)
        return real(path, root, seen)

    monkeypatch.setattr(cases_module, "read_text", counted)
    load_corpus(root)
    assert read.count("case.json") == 1


def test_run_loads_the_corpus_and_starts_the_adapter_once(
    cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from streamproof.cli import main
    from streamproof.harness.protocol import AdapterProcess

    scans: list[Path] = []  # each load lists the corpus once, from the cache or not
    real_tree = cases_module.tree
    starts: list[str] = []
    real_start = AdapterProcess.start

    def tree(root: Path) -> Any:
        scans.append(root)
        return real_tree(root)

    def start(self: AdapterProcess) -> None:
        starts.append(self.spec)
        real_start(self)

    monkeypatch.setattr(cases_module, "tree", tree)
    monkeypatch.setattr(AdapterProcess, "start", start)
    code = main(["run", "--case", CASE, "--transport", "whole,lines", "--no-html", "-q"])
    assert code == 0
    assert "2 passed" in capsys.readouterr().out
    assert len(scans) == 1
    assert starts == ["reference"]


def test_a_case_file_changed_during_a_run_stops_it_with_one_line(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The run reads each case's files again when it runs; bytes other than
    # those the load checked are never scored.
    from streamproof.cli import main
    from streamproof.harness.engine import Engine

    root = tmp_path / "corpus"
    shutil.copytree(data_path("corpus"), root)
    body = root / "cases" / CASE / "response.sse"
    real_run = Engine.run

    def run(self: Engine, case: Any, transport: str) -> Any:
        body.write_bytes(body.read_bytes() + b": edited\n\n")
        return real_run(self, case, transport)

    monkeypatch.setattr(Engine, "run", run)
    argv = ["run", "--corpus", str(root), "--case", CASE, "--transport", "whole,lines"]
    code = main([*argv, "--no-html", "-q"])
    err = capsys.readouterr().err
    assert code == 2
    assert "changed since the corpus was loaded" in err and "response.sse" in err
