"""Checks of ``run``'s inputs that are known before any case runs.

Each mistake is one line and exit 2 at once, rather than a traceback or a
failure after a long run: an adapter command that cannot be split, a
timeout that is not a finite number, an output file whose folder does not
exist.
"""

from __future__ import annotations

import argparse
import math
import shlex
from pathlib import Path

from ..errors import UsageError

__all__ = ["OUTPUT_OPTIONS", "check_adapter_spec", "check_outputs", "check_run_inputs"]

#: The options of ``run`` that name a file it writes.
OUTPUT_OPTIONS = ("json", "html", "junit", "baseline", "write_expect")


def check_run_inputs(args: argparse.Namespace) -> None:
    """Raise ``UsageError`` for the first input of ``run`` that cannot work."""
    if args.timeout is not None and not (0 < args.timeout < math.inf):  # NaN fails too
        raise UsageError(
            f"--timeout must be a positive, finite number of seconds, not {args.timeout}"
        )
    if args.adapter is not None:
        check_adapter_spec(args.adapter)
    check_outputs(
        {f"--{name.replace('_', '-')}": getattr(args, name, None) for name in OUTPUT_OPTIONS}
    )


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
    """Every output file can be created: its folder exists and it is no folder itself."""
    for option, path in paths.items():
        if path is None:
            continue
        folder = path.parent if str(path.parent) else Path(".")
        if path.is_dir():
            raise UsageError(f"{option} {str(path)!r}: is a folder, not a file")
        if not folder.is_dir():
            raise UsageError(f"{option} {str(path)!r}: the folder {str(folder)!r} does not exist")
