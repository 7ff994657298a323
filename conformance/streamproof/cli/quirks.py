"""``streamproof quirks``: the providers × quirks tables of corpus/README.md."""

from __future__ import annotations

import argparse
import sys

from ..atomic import write_atomic
from ..corpus.cases import load_corpus
from ..corpus.gate import read_text
from ..corpus.quirks import load_quirks, readme_with_tables, tables
from ..errors import UsageError
from .options import add_corpus_option

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--write",
        action="store_true",
        help="write them into corpus/README.md between their markers",
    )
    add_corpus_option(parser)


def run(args: argparse.Namespace) -> int:
    corpus = load_corpus(args.corpus)
    catalogue, problems = load_quirks(corpus.root)
    if catalogue is None or problems:
        for problem in problems:
            print(f"streamproof: {problem}", file=sys.stderr)
        return 2
    readme = corpus.root / "README.md"
    if args.write:
        try:
            text = read_text(readme, corpus.root)  # UnsafeFile is a ValueError
            fresh = readme_with_tables(text, catalogue, corpus.cases)
        except ValueError as exc:
            raise UsageError(f"{readme}: {exc}") from None
        write_atomic(readme, fresh)
        print(f"wrote the quirk tables into {readme}")
    else:
        print(tables(catalogue, corpus.cases))
    return 0
