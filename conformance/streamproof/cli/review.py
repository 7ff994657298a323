"""``streamproof review CASE``: check a recorded case field by field, then accept it."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..live.review import review_main

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("case", metavar="CASE", help="a case id of the corpus, or a case folder")
    parser.add_argument(
        "--corpus", type=Path, metavar="DIR", help="corpus folder (default: the shipped one)"
    )
    parser.add_argument(
        "--reviewer", metavar="NAME", help="who reviews (default: git user.name, else $USER)"
    )


def run(args: argparse.Namespace) -> int:
    return review_main(args)
