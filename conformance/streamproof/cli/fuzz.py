"""``streamproof fuzz``: responses drawn from a model, judged against it, shrunk.

Each example is an abstract response (docs/fuzzing.md) rendered to bytes and
run through the adapter under a random chunking; its expected outcome comes
from the model by construction. The first disagreement (or the first N
distinct ones, ``--keep-going N``) is shrunk to a small response and written
as a candidate case under ``--out`` (a new or empty folder, never the shipped
corpus; a corpus of its own once written, for ``validate``, ``show``, ``run
--corpus`` and ``debug``), with one line on the terminal naming its run id.
Exit status: 0 no disagreement, 1 a disagreement, 2 a usage error.
"""

from __future__ import annotations

import argparse
import os
import stat
from pathlib import Path

from ..errors import UsageError
from ..harness.protocol import AdapterProcess
from ..reporting.wire import terminal_safe
from .inputs import MAX_TIMEOUT, check_timeout

__all__ = ["add_arguments", "check_out", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--adapter", default="reference", metavar="SPEC", help="adapter (default: reference)"
    )
    parser.add_argument("--seed", type=int, default=0, help="reproduces a session (default: 0)")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument(
        "--max-examples", type=int, metavar="N", help="examples to draw (default: 200)"
    )
    budget.add_argument("--seconds", type=float, metavar="S", help="draw for this long instead")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("fuzz-candidates"),
        metavar="DIR",
        help="a new or empty folder where candidate cases are written, a corpus"
        " of its own (default: ./fuzz-candidates/)",
    )
    parser.add_argument(
        "--keep-going",
        type=int,
        default=1,
        metavar="N",
        help="go on after a disagreement until N distinct ones (default: 1)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="S",
        help=f"seconds per run, at most {MAX_TIMEOUT} (default: 10)",
    )


def run(args: argparse.Namespace) -> int:
    if args.max_examples is not None and args.max_examples < 1:
        raise UsageError(f"--max-examples must be at least 1, not {args.max_examples}")
    if args.seconds is not None and not args.seconds > 0:
        raise UsageError(f"--seconds must be positive, not {args.seconds}")
    if args.keep_going < 1:
        raise UsageError(f"--keep-going must be at least 1, not {args.keep_going}")
    check_timeout(args.timeout)
    check_out(args.out)
    from ..fuzz.session import Fuzzer

    process = AdapterProcess(args.adapter)
    process.start()
    try:
        fuzzer = Fuzzer(process, seed=args.seed, timeout=args.timeout)
        report = fuzzer.run(
            max_examples=args.max_examples or (10**9 if args.seconds else 200),
            seconds=args.seconds,
            out=args.out,
            adapter=process.name,
            keep_going=args.keep_going,
        )
    finally:
        process.close()
    if not report.findings:
        print(
            f"{terminal_safe(process.name)}: no disagreement in {report.examples} example(s)"
            f" (seed {args.seed}, {report.skipped} not judgeable)"
        )
        return 0
    for finding in report.findings:
        print(terminal_safe(finding.summary(process.name)))
    return 1


def check_out(out: Path) -> None:
    """``--out`` names a new or empty folder, not a link: a candidate is never
    written into a folder a stranger may have filled (a link planted at the
    predictable path of a candidate's file)."""
    try:
        mode = os.lstat(out).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise UsageError(f"--out {str(out)!r}: is a symbolic link; name a new or empty folder")
    if not stat.S_ISDIR(mode):
        raise UsageError(f"--out {str(out)!r}: is not a folder; name a new or empty folder")
    if any(out.iterdir()):
        raise UsageError(f"--out {str(out)!r}: is not empty; name a new or empty folder")
