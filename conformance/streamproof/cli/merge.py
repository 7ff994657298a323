"""``streamproof merge SHARD… --json OUT``: the shards of one run joined into its results."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..corpus.cases import load_corpus
from ..errors import UsageError
from ..harness.strict_json import read_document
from ..reporting.merge import MergeError, merge_documents
from ..reporting.results import write_json
from ..reporting.wire import terminal_safe
from .options import add_corpus_option

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "shards",
        nargs="+",
        type=Path,
        metavar="SHARD",
        help="the results files of 'run --shard K/N --json', every K of one N once",
    )
    parser.add_argument(
        "--json",
        type=Path,
        required=True,
        metavar="FILE",
        help="write the merged results here (the document one whole run would write)",
    )
    add_corpus_option(parser)


def run(args: argparse.Namespace) -> int:
    shards: list[tuple[str, Any]] = []
    for path in args.shards:
        try:
            shards.append((str(path), read_document(path)))
        except OSError as exc:
            raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
        except ValueError as exc:  # one line naming the file
            raise UsageError(str(exc)) from None
    corpus = load_corpus(args.corpus)
    try:
        document = merge_documents(shards, corpus)
    except MergeError as exc:
        raise UsageError(terminal_safe(str(exc))) from None
    args.json.parent.mkdir(parents=True, exist_ok=True)
    write_json(document, args.json)
    summary = document["summary"]
    print(
        f"merged: {args.json}: {len(shards)} shards, {summary['total']} case runs, "
        f"{summary['passed']} passed, {summary['failed']} failed, {summary['errors']} errors"
    )
    return 0
