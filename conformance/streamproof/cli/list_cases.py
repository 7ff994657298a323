"""``streamproof list``: the cases of the corpus, one line each."""

from __future__ import annotations

import argparse

from ..corpus.cases import load_corpus
from ..errors import UsageError
from ..reporting.wire import terminal_safe
from .options import add_corpus_option, plural

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--provider",
        action="append",
        default=[],
        metavar="NAME",
        help="only this provider's cases (repeatable)",
    )
    add_corpus_option(parser)


def run(args: argparse.Namespace) -> int:
    corpus = load_corpus(args.corpus)
    cases = [c for c in corpus.cases if not args.provider or c.provider in args.provider]
    if not cases:
        known = ", ".join(sorted({c.provider for c in corpus.cases}))
        raise UsageError(f"no case of provider {' '.join(args.provider)!r} (known: {known})")
    for case in cases:
        flag = "" if case.runnable else "  (recorded, not yet reviewed)"
        print(terminal_safe(f"{case.id:<58} {case.severity:<6} {case.title}{flag}"))
    providers = len({c.provider for c in cases})
    counted = f"{plural(len(cases), 'case')} of {plural(providers, 'provider')}"
    print(terminal_safe(f"{counted}, corpus {corpus.version}"))
    return 0
