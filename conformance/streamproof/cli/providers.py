"""``streamproof providers``: every provider's cases linted into one report."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..corpus.cases import load_corpus
from ..reporting.providers import write_provider_report
from .options import add_corpus_option

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output",
        type=Path,
        default=Path("reports/providers.html"),
        metavar="FILE",
        help="the HTML report; the JSON goes beside it",
    )
    add_corpus_option(parser)


def run(args: argparse.Namespace) -> int:
    corpus = load_corpus(args.corpus)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    json_path = args.output.with_suffix(".json")
    data = write_provider_report(corpus, args.output, json_path)
    totals = data["totals"]
    left_out = ", ".join(f["folder"] for f in data["left_out"]) or "none"
    print(
        f"provider report: {args.output} and {json_path} "
        f"({totals['providers']} providers, {totals['cases']} cases; not providers: {left_out})"
    )
    return 0
