"""The outputs of one run are written all together or not at all: a reader that
went away (``| head -1``) loses none of them, a signal while they are written
leaves them all old or all new, and the message names which were written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from streamproof import atomic
from streamproof.cli import main
from streamproof.cli import run as run_module

from .corpus_builder import build_corpus, one_line

STREAMPROOF = Path(sys.executable).parent / "streamproof"


def test_a_closed_stdout_loses_no_output_and_ends_quietly(tmp_path: Path) -> None:
    root = build_corpus(tmp_path)
    out = {name: tmp_path / f"p.{name}" for name in ("json", "html", "base")}
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line (``| head -0``, at worst)
    try:
        done = subprocess.run(
            [STREAMPROOF, "run", "--corpus", root, "--json", out["json"],
             "--html", out["html"], "--baseline", out["base"]],
            stdout=write, stderr=subprocess.PIPE, text=True, timeout=120, cwd=tmp_path,
        )  # fmt: skip
    finally:
        os.close(write)
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr and "Broken pipe" not in done.stderr
    results = json.loads(out["json"].read_text(encoding="utf-8"))
    baseline = json.loads(out["base"].read_text(encoding="utf-8"))
    assert len(results["results"]) == len(baseline["results"]) > 0
    assert out["html"].read_text(encoding="utf-8").rstrip().endswith("</html>")
    bad = sum(results["summary"][verdict] for verdict in ("failed", "crashed", "timed_out"))
    assert done.returncode == (1 if bad else 0)
    assert one_line(done.stderr) or not done.stderr.strip()


OUTPUTS = ("json", "html", "base")


def _run_signalled(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    module: object,
    name: str,
) -> tuple[int, str, dict[str, Path]]:
    """Run in this process with three outputs (old files already there); the first
    call of ``module.name`` sends this process SIGTERM once it has done its work."""
    root = build_corpus(tmp_path)
    out = {name: tmp_path / f"p.{name}" for name in OUTPUTS}
    for path in out.values():
        path.write_text("old\n", encoding="utf-8")
    original = getattr(module, name)
    sent: list[int] = []

    def then_terminate(*args: object, **kwargs: object) -> object:
        done = original(*args, **kwargs)
        if not sent:
            sent.append(signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)  # its handler runs before the next line
        return done

    monkeypatch.setattr(module, name, then_terminate)
    code = main(
        ["run", "--corpus", str(root), "--json", str(out["json"]),
         "--html", str(out["html"]), "--baseline", str(out["base"])]
    )  # fmt: skip
    assert sent, f"{name} was never called"
    return code, capsys.readouterr().err, out


def _contents(out: dict[str, Path]) -> set[str]:
    return {path.read_text(encoding="utf-8") for path in out.values()}


def test_sigterm_while_outputs_are_staged_leaves_them_all_old(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, err, out = _run_signalled(monkeypatch, capsys, tmp_path, run_module, "write_json")
    assert code == 128 + signal.SIGTERM
    assert _contents(out) == {"old\n"}  # the HTML too, though pytest had written it
    assert not list(tmp_path.glob(".streamproof-partial-*"))
    line = next(line for line in err.splitlines() if "interrupted" in line)
    assert one_line(err) and "written: none; not written: " in line
    assert all(str(path) in line for path in out.values())


def test_sigterm_while_outputs_are_renamed_waits_for_them_all(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, err, out = _run_signalled(monkeypatch, capsys, tmp_path, atomic, "replace_into")
    assert code == 128 + signal.SIGTERM
    assert "old\n" not in _contents(out)
    json.loads(out["json"].read_text(encoding="utf-8"))
    assert not list(tmp_path.glob(".streamproof-partial-*"))
    line = next(line for line in err.splitlines() if "interrupted" in line)
    assert one_line(err) and line.endswith("not written: none")
    assert all(str(path) in line for path in out.values())


def test_a_batch_is_put_in_place_whole_or_not_at_all(tmp_path: Path) -> None:
    targets = [tmp_path / f"{n}.txt" for n in range(3)]
    for target in targets:
        target.write_text("old\n", encoding="utf-8")
    with pytest.raises(KeyboardInterrupt), atomic.staged_together() as batch:
        with batch.collecting():
            for target in targets[:2]:
                atomic.write_atomic(target, "new\n")
        raise KeyboardInterrupt
    assert {t.read_text(encoding="utf-8") for t in targets} == {"old\n"}
    assert batch.written == [] and sorted(os.listdir(tmp_path)) == ["0.txt", "1.txt", "2.txt"]
    with atomic.staged_together() as batch, batch.collecting():
        for target in targets:
            atomic.write_atomic(target, "new\n")
        assert {t.read_text(encoding="utf-8") for t in targets} == {"old\n"}  # not yet
    assert {t.read_text(encoding="utf-8") for t in targets} == {"new\n"}
    assert batch.written == targets and batch.unwritten == []
