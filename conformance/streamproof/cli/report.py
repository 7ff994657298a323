"""``streamproof report``: one HTML matrix over several results files."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..corpus.cases import load_corpus
from ..errors import UsageError
from ..reporting.cost import ScalingError
from ..reporting.matrix import MatrixError, write_matrix
from .options import add_corpus_option

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        nargs="+",
        type=Path,
        metavar="RESULTS",
        help="results files written by 'run --json', one per adapter",
    )
    parser.add_argument(
        "--output",
        "--out",
        type=Path,
        default=Path("streamproof-matrix.html"),
        metavar="FILE",
        help="where to write it (default: streamproof-matrix.html)",
    )
    parser.add_argument(
        "--scaling",
        type=Path,
        metavar="FILE",
        help="add the cost verdicts and throughput of a 'scaling --json' file",
    )
    add_corpus_option(parser)


def run(args: argparse.Namespace) -> int:
    corpus = load_corpus(args.corpus)
    try:
        write_matrix(args.results, args.output, corpus, args.scaling)
    except (MatrixError, ScalingError) as exc:
        raise UsageError(str(exc)) from None
    print(f"matrix: {args.output} ({len(args.results)} results files, corpus {corpus.version})")
    return 0
