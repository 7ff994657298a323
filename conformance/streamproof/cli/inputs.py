"""Checks of ``run``'s inputs that are known before any case runs.

Each mistake is one line and exit 2 at once, rather than a traceback or a
failure after a long run: an adapter command that cannot be split, a
timeout that is not a finite number of seconds up to :data:`MAX_TIMEOUT`, a
number of jobs over :data:`MAX_JOBS`, an output file whose folder does not
exist or that is a link, a block device or a socket.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from ..atomic import written_into
from ..errors import UsageError

__all__ = [
    "MAX_JOBS",
    "MAX_TIMEOUT",
    "OUTPUT_OPTIONS",
    "check_adapter_spec",
    "check_jobs",
    "check_outputs",
    "check_run_inputs",
    "check_timeout",
]

#: The most adapter processes ``--jobs`` runs at once. Each holds a few pipes
#: read with ``select``, which takes no descriptor past 1023; and past the
#: cores of a large machine more processes only wait on each other.
MAX_JOBS = 64
#: The longest time limit ``--timeout`` takes, in seconds: a day. The largest
#: body a corpus may hold gets 32 minutes by default; the operating system's
#: timers end not far past 9e9 seconds.
MAX_TIMEOUT = 86400

#: The options of ``run`` that name a file it writes.
OUTPUT_OPTIONS = ("json", "html", "junit", "baseline", "write_expect", "trace")


def check_run_inputs(args: argparse.Namespace) -> None:
    """Raise ``UsageError`` for the first input of ``run`` that cannot work."""
    if args.timeout is not None:
        check_timeout(args.timeout)
    check_jobs(args.jobs)
    if args.adapter is not None:
        check_adapter_spec(args.adapter)
    check_outputs(
        {f"--{name.replace('_', '-')}": getattr(args, name, None) for name in OUTPUT_OPTIONS}
    )


def check_timeout(seconds: float, option: str = "--timeout") -> float:
    """``seconds``, if ``option`` may take it: above 0, at most :data:`MAX_TIMEOUT`."""
    if not 0 < seconds <= MAX_TIMEOUT:  # NaN fails too
        raise UsageError(
            f"{option} must be a positive, finite number of seconds, "
            f"at most {MAX_TIMEOUT}, not {seconds:g}"
        )
    return seconds


def check_jobs(jobs: int, option: str = "--jobs") -> int:
    """``jobs``, if ``option`` may take it: from 1 to :data:`MAX_JOBS`."""
    if not 1 <= jobs <= MAX_JOBS:
        raise UsageError(f"{option} must be at least 1 and at most {MAX_JOBS}, not {jobs}")
    return jobs


def check_adapter_spec(spec: str) -> None:
    """A ``cmd:`` adapter's command must split like a shell line and name a program."""
    if not spec.startswith("cmd:"):
        return
    try:
        words = shlex.split(spec[len("cmd:") :])
    except ValueError as exc:
        raise UsageError(f"--adapter {spec!r}: the command does not split: {exc}") from None
    if not words:
        raise UsageError(f"--adapter {spec!r}: no command after 'cmd:'")


def check_outputs(paths: dict[str, Path | None]) -> None:
    """Every output file can be written: its folder exists and it is a plain file,
    none yet, a FIFO or a character device (``atomic.written_into``)."""
    for option, path in paths.items():
        if path is None:
            continue
        folder = path.parent if str(path.parent) else Path(".")
        try:
            written_into(path)
        except OSError as exc:
            raise UsageError(f"{option} {str(path)!r}: {exc.strerror}") from None
        if not folder.is_dir():
            raise UsageError(f"{option} {str(path)!r}: the folder {str(folder)!r} does not exist")
