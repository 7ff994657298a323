"""Start an adapter process so that nothing it starts outlives the harness.

On Linux every adapter runs below a supervisor (``supervisor.py``): a small
separate interpreter that is a child subreaper and holds one end of a socket
pair, the *lifeline*, whose other end is the harness's. Whenever the adapter
must stop (a normal end, a timeout, a crash, Ctrl-C, SIGTERM, the harness's
``kill -9``: the kernel closes the lifeline on any death), the supervisor kills
the adapter's process group and every process left below it, double-forked
and ``setsid`` helpers included, and exits. No thread of the harness is
involved (``PR_SET_PDEATHSIG`` would follow the thread that spawned the
child, and engines run in threads), and the harness's own process is never
made a subreaper (it may be the user's pytest).

Elsewhere, or when ``STREAMPROOF_SUPERVISOR=0``, the adapter is started
directly in a process group of its own and that group is killed: what stays in
the group dies, what leaves it may survive (docs/protocol.md).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

__all__ = ["SUPERVISED", "Child", "close_all", "supervised"]

SUPERVISOR = Path(__file__).with_name("supervisor.py")
# How long the supervisor gets to say it started the adapter (it is a small
# interpreter; a loaded machine may take a while), and to sweep and exit.
START_LIMIT = 30.0
SWEEP_LIMIT = 10.0


def supervised() -> bool:
    """Whether adapters run below the supervisor here (Linux, unless turned off)."""
    return sys.platform.startswith("linux") and os.environ.get("STREAMPROOF_SUPERVISOR") != "0"


SUPERVISED = supervised()

# Every adapter child alive now, by the supervisor's pid (or the adapter's).
# Touched without a lock: close_all() may run in a signal handler.
_LIVE: dict[int, Child] = {}


def close_all() -> None:
    """Tell every live adapter to stop now, without waiting (signal handlers, exit)."""
    for child in tuple(_LIVE.values()):
        child.abandon()


class Child:
    """One adapter process (below its supervisor on Linux).

    ``stdin``, ``stdout`` and ``stderr`` are the adapter's; ``pid`` is the
    adapter's. ``poll`` and ``wait`` follow the supervisor, which ends right
    after the adapter and everything it started, with the adapter's exit code
    or signal.
    """

    def __init__(
        self, argv: list[str], *, stderr: int = subprocess.PIPE, supervise: bool | None = None
    ) -> None:
        """Start ``argv``; ``OSError`` if it cannot be started, as ``Popen`` raises."""
        self.supervise = SUPERVISED if supervise is None else supervise
        self._lifeline: socket.socket | None = None
        self._heard = ""  # what the supervisor said after "started"
        self._lock = threading.Lock()
        if self.supervise:
            self._proc, self.pid = self._start_supervised(argv, stderr)
        else:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,  # a kill of the group reaches its own children too
            )
            self.pid = self._proc.pid
        _LIVE[self._proc.pid] = self

    def _start_supervised(
        self, argv: list[str], stderr: int
    ) -> tuple[subprocess.Popen[bytes], int]:
        ours, theirs = socket.socketpair()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(SUPERVISOR), str(theirs.fileno()), *argv],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,  # out of reach of the terminal's Ctrl-C
                pass_fds=(theirs.fileno(),),
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._lifeline = ours
        said, self._heard = _read_line(ours, time.monotonic() + START_LIMIT)
        words = said.split(maxsplit=2)
        if len(words) == 2 and words[0] == "started" and words[1].isdigit():
            return proc, int(words[1])
        self._stop_supervisor(proc)
        ours.close()
        self._lifeline = None
        _close_streams(proc)
        if len(words) == 3 and words[0] == "error" and words[1].isdigit():
            number = int(words[1])
            raise OSError(number, os.strerror(number), words[2])
        raise OSError(f"the adapter's supervisor did not start it ({said or 'no word'})")

    # -- what Popen offers ------------------------------------------------

    @property
    def stdin(self) -> IO[bytes] | None:
        return self._proc.stdin

    @property
    def stdout(self) -> IO[bytes] | None:
        return self._proc.stdout

    @property
    def stderr(self) -> IO[bytes] | None:
        return self._proc.stderr

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    def poll(self) -> int | None:
        return self._proc.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self._proc.wait(timeout=timeout)

    # -- ending -----------------------------------------------------------

    def abandon(self) -> None:
        """Start the end of the adapter and all it started; return at once.

        Safe in a signal handler and from another thread: it takes no lock
        that could be held (a ``kill`` under way ends the adapter anyway).
        """
        if not self._lock.acquire(blocking=False):
            return
        try:
            if self._lifeline is not None:
                with contextlib.suppress(OSError):
                    self._lifeline.shutdown(socket.SHUT_WR)
            elif self.supervise is False:
                with contextlib.suppress(OSError):
                    os.killpg(self.pid, signal.SIGKILL)
        finally:
            self._lock.release()

    def kill(self) -> None:
        """End the adapter and everything it started, and reap it; closes the pipes."""
        proc = self._proc
        with self._lock:
            if self._lifeline is not None:
                self._stop_supervisor(proc)
                self._lifeline.close()
                self._lifeline = None
            else:
                _kill_group(proc)
        _LIVE.pop(proc.pid, None)
        _close_streams(proc)

    def _stop_supervisor(self, proc: subprocess.Popen[bytes]) -> None:
        """End the lifeline, wait for the supervisor's sweep, and fall back if it never came.

        A supervisor that hangs is killed with its group; one that died
        without saying ``swept`` (an adapter killed it) leaves the adapter's
        own group to kill here: what stayed in it dies, what left it may not.
        """
        lifeline = self._lifeline
        if lifeline is not None:
            with contextlib.suppress(OSError):
                lifeline.shutdown(socket.SHUT_WR)
        try:
            proc.wait(timeout=SWEEP_LIMIT)
        except subprocess.TimeoutExpired:  # a stopped or starved supervisor: the old way
            _kill_group(proc)
        said = self._heard + (_read_all(lifeline) if lifeline is not None else "")
        if "swept" not in said.split() and getattr(self, "pid", 0) > 0:
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)


def _close_streams(proc: subprocess.Popen[bytes]) -> None:
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc``'s process group (it leads one), whether it still runs or not; reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:  # the group is empty: everyone already exited
        pass
    except PermissionError:
        if proc.poll() is None:
            proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def _read_all(sock: socket.socket) -> str:
    """What is left to read on ``sock`` now, without waiting."""
    got = b""
    with contextlib.suppress(OSError):
        while select.select([sock], [], [], 0)[0]:
            piece = sock.recv(512)
            if not piece:
                break
            got += piece
    return got.decode("utf-8", "replace")


def _read_line(sock: socket.socket, deadline: float) -> tuple[str, str]:
    """One short line from ``sock`` before ``deadline`` (``""`` at its end or past the
    deadline), and what came after it."""
    got = b""
    while b"\n" not in got and len(got) < 512:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([sock], [], [], remaining)[0]:
            break
        try:
            piece = sock.recv(512)
        except OSError:
            break
        if not piece:
            break
        got += piece
    line, _, rest = got.partition(b"\n")
    return line.decode("utf-8", "replace").strip(), rest.decode("utf-8", "replace")
