"""Adversary adapters × commands × endings: does any helper outlive the command?

Four adversaries, each an adapter that starts a *helper* and records the
helper's PID (and start time, so a reused PID is never mistaken for it) in a
file; the adversary whose own process must not survive records its own:

``escapes``    an in-process Python adapter whose parser double-forks and
               calls ``setsid()``: the helper leaves the process group and
               the session, and is re-parented;
``own-group``  the same, but the helper is a ``Popen(..., process_group=0)``;
``gil``        an in-process Python adapter whose parser holds the GIL in a
               regular expression for hours (its worker's own threads never
               run again): the worker itself must not survive;
``deaf``       a ``cmd:`` adapter that ignores SIGTERM, SIGHUP, SIGINT and the
               end of its stdin, and starts a helper that ignores them too.

Every helper ignores SIGTERM, SIGHUP and SIGINT. Each command that starts
adapters (``run``, ``check-adapter``, ``fuzz``, ``scaling``, the pytest
plugin) is ended each way: ``end`` (it finishes), ``crash`` (the adapter dies
after starting its helper), ``timeout`` (the adapter hangs past the
command's time limit), and ``SIGINT``, ``SIGTERM``, ``SIGKILL`` of the
command once every helper is up. The recorded PIDs are then polled to a
deadline. tests/hostile/test_no_helper_survives.py runs a reduced matrix;
``scripts/hostile-processes`` runs all of it (the nightly does).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ADVERSARIES",
    "COMMANDS",
    "ENDINGS",
    "Outcome",
    "applicable",
    "play",
]

ADVERSARIES = ("escapes", "own-group", "gil", "deaf")
# run-direct: a run that writes no pytest report, which runs without pytest (cli/direct.py).
COMMANDS = ("run", "run-direct", "check-adapter", "fuzz", "scaling", "plugin")
ENDINGS = ("end", "crash", "timeout", "SIGINT", "SIGTERM", "SIGKILL")

# How long a command gets to end by itself, and its helpers to be gone after.
COMMAND_LIMIT = 120.0
LEFTOVER_LIMIT = 15.0
CASE = "generic/text-split-per-token"

# A helper: ignores the polite signals, sleeps for ten minutes. Whoever
# starts it records it at once (a PID's start time survives ``exec``), so a
# helper killed before its interpreter is up is still known.
HELPER = """\
import signal, time
for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(number, signal.SIG_IGN)
time.sleep(600)
"""

RECORD = """\
def record(what, pid=None):
    pid = pid or os.getpid()
    with open(f"/proc/{pid}/stat", "rb") as stat:
        start = stat.read().rsplit(b")", 1)[1].split()[19].decode()
    with open(os.environ["STREAMPROOF_ADVERSARY_PIDS"], "a") as pids:
        pids.write(f"{pid} {start} {what}\\n")
"""

# The in-process adversaries. ``ACT`` is what the parser does once its helper
# is up: return, die, or hang (past the time limit, or until signalled).
INPROCESS = """\
import os, re, signal, subprocess, sys, time

NAME = "adversary-{name}"
VERSION = "1"
HELPER = {helper!r}
{record}

def start_helper():
    argv = [sys.executable, HELPER]
    {start}

def parse(response):
    for _ in response.iter_bytes():
        pass
    start_helper()
    {act}
    return {{"status": "complete", "choices": []}}
"""

STARTS = {
    "escapes": """if os.fork() == 0:
        os.setsid()
        helper = os.fork()
        if helper == 0:
            os.execv(sys.executable, argv)
        record("helper-of-escapes", helper)
        os._exit(0)
    os.wait()""",
    "own-group": """if sys.version_info >= (3, 11):
        helper = subprocess.Popen(argv, process_group=0)
    else:
        helper = subprocess.Popen(argv, preexec_fn=lambda: os.setpgid(0, 0))
    record("helper-of-own-group", helper.pid)""",
    "gil": "record('worker')  # the worker itself is what must not survive",
}

ACTS = {
    "end": "pass",
    "crash": "os._exit(3)",
    "hang": "time.sleep(600)",
    # Catastrophic backtracking: one C call under the GIL for hours.
    "spin": "re.match(r'(a+)+$', 'a' * 40 + 'b')",
}

# The deaf cmd: adapter: speaks the protocol, ignores the polite signals and
# the end of its stdin, and starts an equally deaf helper.
DEAF = """\
import json, os, signal, subprocess, sys, time
for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(number, signal.SIG_IGN)
{record}
record("deaf")
ACT = {act!r}
helper = None
for line in sys.stdin:
    message = json.loads(line)
    if message["cmd"] == "start":
        print(json.dumps({{"name": "adversary-deaf", "version": "1"}}), flush=True)
    elif message["cmd"] in ("run", "call"):
        if helper is None:
            helper = subprocess.Popen([sys.executable, {helper!r}])
            record("helper-of-deaf", helper.pid)
        if ACT == "crash":
            os._exit(3)
        if ACT == "hang":
            time.sleep(600)
        reply = {{"seq": message["seq"], "outcome": {{"status": "complete", "choices": []}}}}
        print(json.dumps(reply), flush=True)
while True:  # stdin ended: stay anyway
    time.sleep(600)
"""


@dataclass(frozen=True)
class Outcome:
    adversary: str
    command: str
    ending: str
    survivors: list[str]  # "PID what" of every recorded process still alive
    note: str  # why the combination did not play out as planned, or ""

    @property
    def ok(self) -> bool:
        return not self.survivors and not self.note


def applicable(adversary: str, ending: str) -> bool:
    """Whether ``ending`` can happen to ``adversary``: a GIL-bound parser never returns or dies."""
    return not (adversary == "gil" and ending in ("end", "crash"))


def _act(adversary: str, ending: str) -> str:
    if ending in ("end", "crash"):
        return ending
    return "spin" if adversary == "gil" else "hang"


def write_adversary(folder: Path, adversary: str, ending: str) -> str:
    """Write the adversary's files under ``folder``; its adapter spec."""
    record = RECORD
    helper = folder / "helper.py"
    helper.write_text(HELPER)
    act = _act(adversary, ending)
    if adversary == "deaf":
        script = folder / "deaf.py"
        script.write_text(DEAF.format(record=record, act=act, helper=str(helper)))
        return f"cmd:{sys.executable} {script}"
    path = folder / f"adversary_{adversary.replace('-', '_')}.py"
    start = STARTS[adversary]
    path.write_text(
        INPROCESS.format(
            name=adversary,
            helper=str(helper),
            record=textwrap.indent(record, ""),
            start=start,
            act=ACTS[act],
        )
    )
    return str(path)


def _argv(command: str, spec: str, ending: str, folder: Path) -> list[str]:
    timeout = "3" if ending == "timeout" else "600"
    cli = [sys.executable, "-m", "streamproof"]
    if command in ("run", "run-direct"):
        return [
            *cli, "run", "--adapter", spec, "--case", CASE, "--transport", "whole",
            "--timeout", timeout, "--json", str(folder / "out.json"),
            *(["--no-html"] if command == "run-direct" else []),
        ]  # fmt: skip
    if command == "check-adapter":
        return [*cli, "check-adapter", spec, "--timeout", timeout]
    if command == "fuzz":
        return [
            *cli, "fuzz", "--adapter", spec, "--max-examples", "3", "--timeout", timeout,
            "--out", str(folder / "candidates"),
        ]  # fmt: skip
    if command == "scaling":
        return [
            *cli, "scaling", "--adapter", spec, "--dimension", "reads", "--sizes", "1,2",
            "--repeat", "1", "--no-throughput", "--timeout", timeout,
        ]  # fmt: skip
    if command == "plugin":
        return [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
            str(folder), "--streamproof", spec, "--streamproof-case", CASE,
            "--streamproof-transport", "whole", "--streamproof-timeout", timeout,
        ]  # fmt: skip
    raise ValueError(command)


def _alive(pid: int, start: str) -> bool:
    """Whether ``pid`` is still the process that recorded ``start``, and not a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return fields[0] != b"Z" and fields[19].decode() == start


def recorded(pids: Path) -> list[tuple[int, str, str]]:
    if not pids.exists():
        return []
    found = []
    for line in pids.read_text().splitlines():
        pid, start, what = line.split(" ", 2)
        found.append((int(pid), start, what))
    return found


def _poll(condition: object, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        if condition():  # type: ignore[operator]
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def play(adversary: str, command: str, ending: str, folder: Path) -> Outcome:
    """Run one combination in ``folder`` (new); who survived it."""
    folder.mkdir(parents=True)
    spec = write_adversary(folder, adversary, ending)
    pids = folder / "pids"
    env = {**os.environ, "STREAMPROOF_ADVERSARY_PIDS": str(pids)}
    expected = 2 if adversary == "deaf" else 1  # the deaf adapter records itself too
    note = ""
    with (folder / "command.log").open("wb") as log:
        proc = subprocess.Popen(
            _argv(command, spec, ending, folder),
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            if ending.startswith("SIG"):
                if _poll(lambda: len(recorded(pids)) >= expected, COMMAND_LIMIT):
                    proc.send_signal(getattr(signal, ending))
                else:
                    note = "the adversary's helpers never started"
            try:
                proc.wait(timeout=COMMAND_LIMIT)
            except subprocess.TimeoutExpired:
                note = note or f"the command did not end within {COMMAND_LIMIT:g} s"
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if not note and not recorded(pids):
        note = "the adversary never ran (see command.log)"
    everyone = recorded(pids)
    _poll(lambda: not any(_alive(pid, start) for pid, start, _ in everyone), LEFTOVER_LIMIT)
    survivors = [f"{pid} {what}" for pid, start, what in everyone if _alive(pid, start)]
    for pid, start, _ in everyone:  # never leave them behind, whatever the verdict
        if _alive(pid, start):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    return Outcome(adversary, command, ending, survivors, note)
