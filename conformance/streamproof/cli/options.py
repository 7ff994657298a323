"""Options that several commands share."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_corpus_option", "plural"]


def add_corpus_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        help="corpus folder (default: the corpus shipped with streamproof)",
    )


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 case``, ``2 cases``; ``nouns`` for an irregular plural."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"
