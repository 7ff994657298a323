"""No process started by a run outlives it, however the run ends.

Each test writes an adapter whose parser starts a grandchild (a sleeping
interpreter in the adapter's process group) and then returns, hangs or
dies; every process of the run carries a unique marker in its argv, so
/proc tells whether any survived.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from streamproof.harness import protocol
from streamproof.harness.protocol import AdapterProcess

pytestmark = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")

CASE = "generic/text-split-per-token"

ACTIONS = {
    "returns": "return {'status': 'complete', 'choices': []}",
    "hangs": "time.sleep(600)",
    "dies": "os._exit(3)",
}


def _marked(marker: str) -> list[int]:
    """The live processes whose argv holds ``marker`` (zombies have no argv)."""
    found = []
    needle = marker.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:  # it ended while we looked
            continue
    return found


def _wait_for(condition, seconds: float = 60.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return bool(condition())


def _reap_survivors(marker: str) -> list[int]:
    """The survivors, after giving the run's clean-up a moment; then kills them."""
    _wait_for(lambda: not _marked(marker), 10.0)
    left = _marked(marker)
    for pid in left:  # never leave them behind, even when the test fails
        with_suppress_kill(pid)
    return left


def with_suppress_kill(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _adapter(tmp_path: Path, marker: str, action: str) -> Path:
    path = tmp_path / marker / "spawner.py"  # the worker's argv names it
    path.parent.mkdir()
    path.write_text(
        textwrap.dedent(
            f"""\
            import os, subprocess, sys, time

            NAME = "spawner"


            def parse(response):
                subprocess.Popen(
                    [sys.executable, "-c", "import time; time.sleep(600)", "{marker}-grandchild"]
                )
                {ACTIONS[action]}
            """
        )
    )
    return path


def _run(adapter: Path, *extra: str, cases: str = CASE) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "streamproof", "run", "--adapter", str(adapter)]
    with (adapter.parent / "run.log").open("wb") as log:
        return subprocess.Popen(
            [*argv, "--case", cases, "--transport", "whole", *extra],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )


@pytest.fixture
def marker() -> str:
    return f"streamproof-hygiene-{uuid.uuid4().hex}"


@pytest.mark.parametrize(
    ("action", "options"),
    [("returns", ()), ("hangs", ("--timeout", "5")), ("dies", ())],
    ids=["normal-end", "timeout", "crash"],
)
def test_a_finished_run_leaves_no_process(
    tmp_path: Path, marker: str, action: str, options: tuple[str, ...]
) -> None:
    proc = _run(_adapter(tmp_path, marker, action), *options)
    proc.wait(timeout=120)
    assert proc.returncode == 1, (tmp_path / "run.log").read_text()
    assert _reap_survivors(marker) == []


@pytest.mark.parametrize(
    ("signum", "jobs"),
    [(signal.SIGINT, "1"), (signal.SIGTERM, "1"), (signal.SIGTERM, "2")],
    ids=["SIGINT", "SIGTERM", "SIGTERM-jobs-2"],
)
def test_a_stopped_run_leaves_no_process(
    tmp_path: Path, marker: str, signum: int, jobs: str
) -> None:
    proc = _run(
        _adapter(tmp_path, marker, "hangs"), "--timeout", "600", "--jobs", jobs, cases="generic/*"
    )
    try:
        started = f"{marker}-grandchild"
        assert _wait_for(lambda: len(_marked(started)) == int(jobs)), "the cases never started"
        proc.send_signal(signum)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _reap_survivors(marker) == []


SPAWNING_CMD = """\
import json, subprocess, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["cmd"] == "start":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", sys.argv[1]])
        print(json.dumps({"name": "spawner", "version": "1"}), flush=True)
"""


def _cmd_adapter(tmp_path: Path, marker: str) -> str:
    script = tmp_path / "spawning_cmd.py"
    script.write_text(SPAWNING_CMD)
    return f"cmd:{sys.executable} {script} {marker}"


def test_close_all_kills_every_adapter_group(tmp_path: Path, marker: str) -> None:
    # A cmd: adapter in another language cannot watch its parent; close_all()
    # (for the CLI's signal handlers) ends it and everything it started.
    adapter = AdapterProcess(_cmd_adapter(tmp_path, marker))
    adapter.start()
    try:
        # The adapter and its child (and, on Linux, the supervisor, whose argv names it too).
        assert _wait_for(lambda: len(_marked(marker)) >= 2)
        protocol.close_all()
        assert _reap_survivors(marker) == []
    finally:
        adapter.close()


def test_the_interpreters_exit_kills_the_adapter_groups(tmp_path: Path, marker: str) -> None:
    # A program that starts an adapter and forgets to close it.
    program = (
        "from streamproof.harness.protocol import AdapterProcess\n"
        f"AdapterProcess({_cmd_adapter(tmp_path, marker)!r}).start()\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert _reap_survivors(marker) == []


def test_the_worker_ends_its_group_when_its_parent_is_gone(tmp_path: Path, marker: str) -> None:
    # The harness killed outright (SIGKILL: no handler, no atexit runs).
    program = (
        "import sys, time\n"
        "from streamproof.harness.engine import Engine\n"
        "from streamproof.corpus import load_corpus\n"
        f"engine = Engine({str(_adapter(tmp_path, marker, 'hangs'))!r}, timeout=600)\n"
        f"case = next(c for c in load_corpus().cases if c.id == {CASE!r})\n"
        "engine.run(case, 'whole')\n"
    )
    harness = subprocess.Popen([sys.executable, "-c", program])
    try:
        assert _wait_for(lambda: bool(_marked(f"{marker}-grandchild"))), "the case never started"
        harness.kill()
        harness.wait(timeout=60)
    finally:
        if harness.poll() is None:
            harness.kill()
            harness.wait()
    assert _reap_survivors(marker) == []
