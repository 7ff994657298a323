"""The options of ``run`` that choose case runs, as pytest users expect them, and its shard.

``--transport`` and ``--case`` repeat and take comma lists; ``--case``
takes an id as the run prints it (``case [transport]`` or
``case[transport]``); ``--provider``, ``-k EXPR``, ``-x``, ``-q`` and ``-v``
mean what they mean to pytest.
"""

from __future__ import annotations

import argparse
from typing import Any, TypeVar

from ..errors import UsageError
from ..harness.selection import KeywordError, Selection, split_values
from ..harness.sharding import Shard
from ..harness.transports import TRANSPORTS, parse_transports

_Run = TypeVar("_Run", bound=tuple[Any, str])

__all__ = ["add_selection_arguments", "selection_of", "shard_of", "shard_share"]


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
        "--shard",
        metavar="K/N",
        help="run shard K of N of the selected case runs (each in exactly one shard; "
        "'streamproof merge' joins the shards' --json files into one run)",
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


def shard_of(args: argparse.Namespace) -> Shard | None:
    """``--shard K/N`` (``None``: the whole plan); ``UsageError`` if bad or beside ``-x``."""
    if args.shard is None:
        return None
    try:
        shard = Shard.parse(args.shard)
    except ValueError as exc:
        raise UsageError(f"--shard: {exc}") from None
    if args.exitfirst:
        raise UsageError("--shard runs a share of the plan to merge: it does not go with -x")
    return shard


def shard_share(plan: list[_Run], shard: Shard | None) -> list[_Run]:
    """The runs of ``plan`` that ``shard`` makes; ``UsageError`` when it makes none."""
    if shard is None or not plan:
        return plan
    share = shard.take(plan)
    if not share:
        raise UsageError(
            f"--shard {shard}: the plan holds fewer runs ({len(plan)}) than shards, "
            "so this one holds none: use fewer shards"
        )
    return share
