"""No helper of an adversary adapter outlives the command that started it.

The reduced matrix of tests/hostile/survivors.py: every adversary against
``run`` killed with SIGKILL (no handler of ours runs), every ending of ``run``,
and each other command that starts adapters once.
``scripts/hostile-processes`` plays every combination (the nightly does).
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from streamproof.harness import spawn

from .survivors import ADVERSARIES, play

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the guarantee is Linux's"),
    pytest.mark.skipif(not spawn.SUPERVISED, reason="STREAMPROOF_SUPERVISOR=0"),
]

REDUCED = [
    *[(adversary, "run", "SIGKILL") for adversary in ADVERSARIES],
    *[("escapes", "run", ending) for ending in ("end", "crash", "timeout", "SIGINT", "SIGTERM")],
    *[("escapes", "run-direct", ending) for ending in ("end", "crash", "timeout", "SIGTERM")],
    ("gil", "run-direct", "SIGINT"),
    ("deaf", "check-adapter", "SIGTERM"),
    ("gil", "fuzz", "SIGTERM"),
    ("own-group", "scaling", "SIGKILL"),
    ("escapes", "plugin", "SIGTERM"),
]


@pytest.mark.parametrize(("adversary", "command", "ending"), REDUCED, ids="-".join)
def test_no_helper_outlives_the_command(
    tmp_path: Path, adversary: str, command: str, ending: str
) -> None:
    outcome = play(adversary, command, ending, tmp_path / "play")
    log = (tmp_path / "play" / "command.log").read_text(errors="replace")[-2000:]
    assert outcome.note == "", f"{outcome.note}\n{log}"
    assert outcome.survivors == [], log


def _helper_script(tmp_path: Path) -> Path:
    # An adapter that leaves its helper holding its stdout, then exits.
    script = tmp_path / "leaves_a_helper.py"
    script.write_text(
        "import os, sys\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    import time; time.sleep(600)\n"
        "sys.exit(7)\n"
    )
    return script


def test_the_end_of_the_adapter_ends_its_helpers_and_its_stdout(tmp_path: Path) -> None:
    # Without the sweep the helper would hold the stdout pipe open: no end of
    # file, so the harness would wait for a reply until its deadline.
    child = spawn.Child([sys.executable, str(_helper_script(tmp_path))])
    try:
        assert child.stdout is not None
        assert child.stdout.read() == b""  # the end of file came: the helper is gone too
        assert child.wait(timeout=30) == 7  # the adapter's own exit code
    finally:
        child.kill()


def test_the_adapter_pid_is_the_adapters(tmp_path: Path) -> None:
    script = tmp_path / "says_its_pid.py"
    script.write_text(
        "import os, sys; print(os.getpid(), os.getppid(), flush=True); sys.stdin.read()"
    )
    child = spawn.Child([sys.executable, str(script)])
    try:
        assert child.stdout is not None
        pid, parent = map(int, child.stdout.readline().split())
        assert pid == child.pid and parent != os.getpid()  # below the supervisor
        assert os.getpgid(pid) == pid  # a process group of its own
    finally:
        child.kill()
    assert child.returncode is not None


def test_a_program_that_cannot_start_is_the_same_oserror_as_popen() -> None:
    with pytest.raises(FileNotFoundError) as raised:
        spawn.Child(["/no/such/program"])
    with pytest.raises(FileNotFoundError) as direct:
        subprocess.Popen(["/no/such/program"])
    assert str(raised.value) == str(direct.value)


def test_a_signal_death_of_the_adapter_is_reported_as_such(tmp_path: Path) -> None:
    script = tmp_path / "killed.py"
    script.write_text("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    child = spawn.Child([sys.executable, str(script)])
    try:
        assert child.wait(timeout=30) == -11
    finally:
        child.kill()
    assert not (tmp_path / "core").exists()


def test_the_harness_is_never_made_a_subreaper(tmp_path: Path) -> None:
    spawn.Child([sys.executable, "-c", "pass"]).kill()
    libc = ctypes.CDLL(None, use_errno=True)
    value = ctypes.c_int(-1)
    assert libc.prctl(37, ctypes.byref(value), 0, 0, 0) == 0  # PR_GET_CHILD_SUBREAPER
    assert value.value == 0


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return True
    return state == b"Z"


def test_an_adapter_that_kills_its_supervisor_still_loses_its_group(tmp_path: Path) -> None:
    # The documented limit: the fallback kills the adapter's process group.
    script = tmp_path / "kills_its_supervisor.py"
    script.write_text(
        "import os, signal, subprocess, sys\n"
        "os.kill(os.getppid(), signal.SIGKILL)\n"
        "helper = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "print(os.getpid(), helper.pid, flush=True)\n"
        "sys.stdin.read()\n"
        "import time; time.sleep(600)\n"
    )
    child = spawn.Child([sys.executable, str(script)])
    assert child.stdout is not None
    pids = [int(pid) for pid in child.stdout.readline().split()]
    child.kill()
    deadline = time.monotonic() + 15
    while not all(map(_gone, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in pids if not _gone(pid)]
    for pid in left:
        os.kill(pid, 9)
    assert left == []
