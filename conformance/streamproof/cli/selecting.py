"""The options of ``run`` that choose case runs, as pytest users expect them.

``--transport`` and ``--case`` repeat and take comma lists; ``--case``
takes an id as the run prints it (``case [transport]`` or
``case[transport]``); ``--provider``, ``-k EXPR``, ``-x``, ``-q`` and ``-v``
mean what they mean to pytest.
"""

from __future__ import annotations

import argparse

from ..errors import UsageError
from ..harness.selection import KeywordError, Selection, split_values
from ..harness.transports import TRANSPORTS, parse_transports

__all__ = ["add_selection_arguments", "selection_of"]


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--transport",
        action="append",
        metavar="LIST",
        help=f"'all' (the default) or a comma list of {', '.join(TRANSPORTS)} (repeatable)",
    )
    parser.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="GLOB",
        help="only cases whose id matches, or one run as printed: 'CASE [TRANSPORT]' "
        "(repeatable, comma lists)",
    )
    parser.add_argument(
        "--provider",
        action="append",
        default=[],
        metavar="NAME",
        help="only this provider's cases (repeatable, comma lists)",
    )
    parser.add_argument(
        "-k",
        dest="keyword",
        metavar="EXPR",
        help="only runs whose id, title, tags, provider, severity or transport match EXPR "
        "(words, and, or, not, parentheses; as pytest -k)",
    )
    parser.add_argument(
        "-x", "--exitfirst", action="store_true", help="stop at the first failing case run"
    )
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="print every case run as it ends"
    )
    parser.add_argument(
        "-q", "--quiet", action="count", default=0, help="print the summary line only"
    )


def selection_of(args: argparse.Namespace) -> tuple[list[str], Selection]:
    """The transports and the selection asked for; ``UsageError`` on a bad value."""
    transports: list[str] = []
    for value in split_values(args.transport or ["all"]):
        try:
            for name in parse_transports(value):
                if name not in transports:
                    transports.append(name)
        except ValueError as exc:
            raise UsageError(f"--transport: {exc}") from None
    try:
        selection = Selection.parse(args.case, args.provider, args.keyword or "")
    except KeywordError as exc:
        raise UsageError(str(exc)) from None
    if args.exitfirst and (args.json or args.baseline or args.write_expect):
        raise UsageError(
            "-x stops at the first failure: its results would read as a whole run, "
            "so it does not go with --json, --baseline or --write-expect"
        )
    return transports, selection
