"""``streamproof diff OLD NEW``: what changed between two runs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..atomic import write_atomic
from ..reporting.diff import DiffError, diff

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", type=Path, metavar="OLD", help="results file or baseline")
    parser.add_argument("new", type=Path, metavar="NEW", help="results file or baseline")
    parser.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        help="corpus whose manifest lists the retired cases (default: the shipped corpus)",
    )
    parser.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="GLOB",
        help="compare only cases whose id matches (repeatable)",
    )
    parser.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="also write the diff as JSON here ('-' for standard output, instead of the text)",
    )


def run(args: argparse.Namespace) -> int:
    """``streamproof diff``: 1 when a case regressed, 0 otherwise, 2 on a usage error."""
    try:
        result = diff(args.old, args.new, args.corpus, cases=args.case)
    except DiffError as exc:
        print(f"streamproof: {exc}", file=sys.stderr)
        return 2
    text = json.dumps(result.as_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if args.json is not None and str(args.json) == "-":
        sys.stdout.write(text)
    else:
        print(result.render())
        if args.json is not None:
            write_atomic(args.json, text)
    return 1 if result.has_regression else 0
