"""An interrupted ``streamproof run`` leaves nothing that reads as a result.

A real ``streamproof run`` on a slow adapter is stopped by SIGINT (Ctrl-C) or
SIGTERM once case runs are under way: it must say how far it got, exit 130 or
143, and leave none of the files it was asked for, nor a temporary file.
Every output is written atomically, so the same holds for a crash.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from streamproof.atomic import write_atomic, writing_atomic
from streamproof.reporting.verify import verify

ADAPTERS = Path(__file__).parent / "adapters"
OUTPUTS = {
    "--json": "results.json",
    "--baseline": "baseline.json",
    "--html": "report.html",
    "--junit": "junit.xml",
    "--write-expect": "expect.json",
}
CASES = ("generic/*", "openai/*")


def _start(folder: Path, through_pytest: bool = True) -> tuple[subprocess.Popen[str], Path]:
    """A run writing every output (through pytest, which writes the HTML report and
    JUnit), or every output but those two (straight, cli/direct.py)."""
    mark = folder / "mark.txt"
    (folder / "out").mkdir()  # outputs go into an existing folder (checked before the run)
    command = [sys.executable, "-m", "streamproof", "run", "--adapter", str(ADAPTERS / "slow.py")]
    command += ["--transport", "whole,lines", "--seed", "1"]
    for glob in CASES:
        command += ["--case", glob]
    for option, name in OUTPUTS.items():
        if through_pytest or option not in ("--html", "--junit"):
            command += [option, str(folder / "out" / name)]
    if not through_pytest:
        command += ["--no-html"]
    env = {**os.environ, "STREAMPROOF_TEST_MARK": str(mark)}
    proc = subprocess.Popen(
        command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    return proc, mark


def _wait_for_case_runs(proc: subprocess.Popen[str], mark: Path, count: int) -> None:
    """Until the adapter has finished ``count`` parses (the run is under way)."""
    for _ in range(6000):  # a bound on the loop, not a claim about speed
        if mark.exists() and len(mark.read_text(encoding="utf-8").splitlines()) >= count:
            return
        assert proc.poll() is None, "the run ended before it could be interrupted"
        time.sleep(0.01)
    proc.kill()
    pytest.fail("the adapter never got through its first cases")


@pytest.mark.parametrize("through_pytest", [True, False], ids=["pytest", "direct"])
@pytest.mark.parametrize(
    ("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
def test_an_interrupted_run_writes_no_output(
    tmp_path: Path, signum: int, status: int, through_pytest: bool
) -> None:
    proc, mark = _start(tmp_path, through_pytest)
    try:
        _wait_for_case_runs(proc, mark, 3)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == status, out + err
    lines = [line for line in err.splitlines() if "interrupted" in line]
    assert len(lines) == 1, err
    assert lines[0].startswith("streamproof: interrupted after ")
    done, total = lines[0].split("interrupted after ")[1].split(" case runs")[0].split(" of ")
    assert 0 < int(done) < int(total)
    assert "Traceback" not in err
    assert "passed" not in out  # no summary of a run that did not finish
    folder = tmp_path / "out"
    left = sorted(p.name for p in folder.iterdir()) if folder.exists() else []
    assert left == [], f"an interrupted run left {left}"


def test_write_atomic_replaces_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "results.json"
    write_atomic(target, "old\n")

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", interrupted)  # dies after writing, before the rename
        with pytest.raises(KeyboardInterrupt):
            write_atomic(target, "new\n")
    assert target.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]
    write_atomic(target, "new\n")
    assert target.read_text(encoding="utf-8") == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def test_a_file_written_piece_by_piece_replaces_whole_or_not_at_all(tmp_path: Path) -> None:
    # The results file of a large run is written as it is encoded.
    target = tmp_path / "results.json"
    write_atomic(target, "old\n")
    with pytest.raises(KeyboardInterrupt), writing_atomic(target) as out:
        out.write("half of a ")
        raise KeyboardInterrupt
    assert target.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]
    with writing_atomic(target) as out:
        out.write("new ")
        out.write("text\n")
    assert target.read_text(encoding="utf-8") == "new text\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_verify_rejects_a_results_file_marked_interrupted(tmp_path: Path) -> None:
    # streamproof writes no results of an interrupted run; a file that says it
    # was interrupted (written by another tool, or by hand) is never verified.
    results = tmp_path / "r.json"
    command = [sys.executable, "-m", "streamproof", "run", "--transport", "whole", "--seed", "1"]
    proc = subprocess.run(
        [*command, "--case", "generic/finish-without-done", "--json", str(results)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert verify(results) == []
    text = results.read_text(encoding="utf-8")
    results.write_text(text.replace('"run": {', '"run": {"interrupted": true, ', 1))
    problems = verify(results)
    assert any("interrupted" in p for p in problems), problems
