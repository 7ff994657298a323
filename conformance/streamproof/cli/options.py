"""Options that several commands share."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_corpus_option"]


def add_corpus_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        help="corpus folder (default: the corpus shipped with streamproof)",
    )
